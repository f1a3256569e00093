# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``areal.api.cli_args``: every config class under the name AReaL scripts import.

``GenerationHyperparameters`` (``generation``) loads with this module. The experiment configs
(GRPOConfig, PPOConfig, ...) and load_expr_config (``experiment_config``) load on first use:
workflows that only need generation settings should not pay for them.
"""

from __future__ import annotations

# AReaL's examples import dataclass and field from cli_args (examples/tir/tir_workflow.py).
from dataclasses import dataclass, field  # noqa: F401

from areal_runtime.api.generation import GenerationHyperparameters, stop_ids_of
from areal_runtime.utils.lazy_exports import lazy_exports

_EXPERIMENT_NAMES = frozenset(
    {
        "AgentConfig", "BaseExperimentConfig", "ConfigError", "DPOConfig", "DPOEngineConfig",
        "EvaluatorConfig", "GRPOConfig", "RWConfig", "SFTConfig",
        "InferenceEngineConfig", "MicroBatchSpec", "NormConfig", "OptimizerConfig",
        "PPOActorConfig", "PPOConfig", "PPOCriticConfig", "PerfTracerConfig", "RecoverConfig",
        "RejectionSamplingConfig", "SaverConfig", "SessionTracerConfig", "StatsLoggerConfig",
        "TrackioConfig", "TrainDatasetConfig", "TrainEngineConfig", "ValidDatasetConfig",
        "build_config", "load_expr_config",
    }
)  # fmt: skip

__all__ = ["GenerationHyperparameters", "stop_ids_of", *sorted(_EXPERIMENT_NAMES)]

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(_EXPERIMENT_NAMES, "areal_runtime.api.experiment_config")
)
