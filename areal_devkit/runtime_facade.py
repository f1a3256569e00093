# SPDX-License-Identifier: Apache-2.0
"""Everything the ``areal-devkit`` command uses from the runtime, in one place.

Why a facade: the commands reached into some twenty runtime modules, so any move inside
``areal_runtime`` could break the CLI unseen. Now this table is the whole contract: the CLI
imports only from here, and the runtime's internals can move as long as this file follows.
It lives in ``areal_devkit`` (its only user) so the runtime knows nothing of the CLI.

Why lazy: ``areal-devkit --help``, ``new`` and ``check``'s refusals run on the base install,
without torch. A name is imported from its runtime module on first use (PEP 562), so a
missing extra still surfaces as the ``ModuleNotFoundError`` the CLI turns into an install hint.
"""

from __future__ import annotations

import importlib
from typing import Any

EXPORTS: dict[str, str] = {
    # configs and their loading (AReaL's load_expr_config route)
    "ConfigError": "areal_runtime.api.config_loading",
    "GenerationHyperparameters": "areal_runtime.api.cli_args",
    "GRPOConfig": "areal_runtime.api.cli_args",
    "PPOActorConfig": "areal_runtime.api.cli_args",
    "load_expr_config": "areal_runtime.api.cli_args",
    "structured": "areal_runtime.api.config_loading",
    # engines
    "ENGINE_SPECS": "areal_runtime.engine.factory",
    "engine_from_spec": "areal_runtime.engine.factory",
    "LocalEngine": "areal_runtime.engine.local",
    # workflows, datasets, rollouts
    "load_object": "areal_runtime.infra.workflow_resolution",
    "iter_dataset": "areal_runtime.infra.workflow_executor",
    "RolloutConfig": "areal_runtime.infra.workflow_executor",
    "run_rollout": "areal_runtime.infra.workflow_executor",
    "summarize_traceback": "areal_runtime.infra.traceback_summary",
    "get_custom_dataset": "areal_runtime.dataset",
    "load_image": "areal_runtime.utils.image",
    "check_workflow": "areal_runtime.consistency",
    # the embedded models and the bundled task
    "EMBEDDED_NAMES": "areal_runtime.models.default_model",
    "MAX_OPERAND": "areal_runtime.models.default_model",
    "arithmetic_reward": "areal_runtime.models.default_model",
    "load_underconfident_model": "areal_runtime.models.default_model",
    "TOOL_AGENT_LR": "areal_runtime.models.default_model",
    "sample_dataset_path": "areal_runtime.models.default_model",
    "question": "areal_runtime.models.train_default",
    "tiny_tokenizer": "areal_runtime.models.tokenizers",
    "sample_image": "areal_runtime.models.vision",
    "tiny_vision_processor": "areal_runtime.models.vision",
    "vision_sample_path": "areal_runtime.models.vision",
    "with_image": "areal_runtime.models.vision",
    "load_hf_tokenizer": "areal_runtime.utils.hf_utils",
    # training
    "ConsistencyError": "areal_runtime.trainer.loop",
    "TrainingInputError": "areal_runtime.trainer.errors",
    "PPOTrainer": "areal_runtime.trainer.rl_trainer",
    "total_steps_of": "areal_runtime.trainer.rl_trainer",
    "check_writable": "areal_runtime.trainer.checkpoint",
    "STATS_FILE": "areal_runtime.utils.stats_logger",
    "log_dir": "areal_runtime.utils.stats_logger",
    "read_stats": "areal_runtime.utils.stats_logger",
    # files, addresses, what an engine reports (torch-free)
    "JsonlError": "areal_runtime.utils.files",
    "atomic_open": "areal_runtime.utils.files",
    "atomic_write_text": "areal_runtime.utils.files",
    "iter_jsonl": "areal_runtime.utils.files",
    "is_loopback": "areal_runtime.utils.network",
    "cached_tokens": "areal_runtime.engine.response_extras",
    # serve
    "AgentProxy": "areal_runtime.experimental.openai.proxy",
    "concat_padded_tensors": "areal_runtime.utils.data",
}
"""Exported name -> the runtime module that defines it."""

__all__ = sorted(EXPORTS)


def __getattr__(name: str) -> Any:
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Looked up on each use, not cached here: a name patched in its runtime module (a test's
    # monkeypatch, a benchmark's wrapper) is what the CLI then calls.
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
