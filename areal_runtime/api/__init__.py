# SPDX-License-Identifier: Apache-2.0
"""Re-exports of the workflow-facing API (AReaL's ``areal.api``), loaded on first use.

Lazy so that ``import areal_runtime.api`` stays cheap: no torch, no network, no process pool.
"""

from __future__ import annotations

from areal_runtime.utils.lazy_exports import lazy_exports

_LAZY_IMPORTS = {
    "AgentWorkflow": "areal_runtime.api.workflow_api",
    "RolloutWorkflow": "areal_runtime.api.workflow_api",
    "WorkflowLike": "areal_runtime.api.workflow_api",
    "InferenceEngine": "areal_runtime.api.engine_api",
    "ModelRequest": "areal_runtime.api.io_struct",
    "ModelResponse": "areal_runtime.api.io_struct",
    "FinetuneSpec": "areal_runtime.api.io_struct",
    "StepInfo": "areal_runtime.api.io_struct",
    "SaveLoadMeta": "areal_runtime.api.io_struct",
    "RolloutStat": "areal_runtime.api.io_struct",
    "GenerationHyperparameters": "areal_runtime.api.cli_args",
    "AsyncRewardWrapper": "areal_runtime.api.reward_api",
}

__all__ = sorted(_LAZY_IMPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_IMPORTS)
