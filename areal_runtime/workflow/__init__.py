# SPDX-License-Identifier: Apache-2.0
"""AReaL's reference workflows (``areal.workflow``), loaded on first use.

Same constructors and behaviour as AReaL, so a workflow that subclasses ``RLVRWorkflow`` (and
overrides ``_compute_rewards`` or ``_collect_samples``) ports by renaming ``areal``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MultiTurnWorkflow", "RLVRWorkflow", "VisionRLVRWorkflow"]

_LAZY_IMPORTS = {
    "RLVRWorkflow": "areal_runtime.workflow.rlvr",
    "MultiTurnWorkflow": "areal_runtime.workflow.multi_turn",
    "VisionRLVRWorkflow": "areal_runtime.workflow.vision_rlvr",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_IMPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY_IMPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
