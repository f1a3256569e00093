# SPDX-License-Identifier: Apache-2.0
"""Asynchronous PPO/GRPO training on one machine (AReaL's ``areal.trainer``).

``PPOTrainer`` is imported lazily so ``import areal_runtime.trainer`` stays cheap (no torch).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PPOTrainer"]


def __getattr__(name: str) -> Any:
    if name == "PPOTrainer":
        from areal_runtime.trainer.rl_trainer import PPOTrainer

        return PPOTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
