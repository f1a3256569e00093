# SPDX-License-Identifier: Apache-2.0
"""Asynchronous PPO/GRPO training on one machine (AReaL's ``areal.trainer``).

``PPOTrainer`` is imported lazily so ``import areal_runtime.trainer`` stays cheap (no torch).
"""

from __future__ import annotations

from areal_runtime.utils.lazy_exports import lazy_exports

__all__ = ["PPOTrainer"]


__getattr__, __dir__ = lazy_exports(__name__, {"PPOTrainer": ".rl_trainer"})
