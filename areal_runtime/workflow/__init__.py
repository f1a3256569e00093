# SPDX-License-Identifier: Apache-2.0
"""AReaL's reference workflows (``areal.workflow``), loaded on first use.

Same constructors and behaviour as AReaL, so a workflow that subclasses ``RLVRWorkflow`` (and
overrides ``_compute_rewards`` or ``_collect_samples``) ports by renaming ``areal``.
"""

from __future__ import annotations

from areal_runtime.utils.lazy_exports import lazy_exports

__all__ = ["MultiTurnWorkflow", "RLVRWorkflow", "VisionRLVRWorkflow"]

_LAZY_IMPORTS = {
    "RLVRWorkflow": "areal_runtime.workflow.rlvr",
    "MultiTurnWorkflow": "areal_runtime.workflow.multi_turn",
    "VisionRLVRWorkflow": "areal_runtime.workflow.vision_rlvr",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_IMPORTS)
