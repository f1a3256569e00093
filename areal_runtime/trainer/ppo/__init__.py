# SPDX-License-Identifier: Apache-2.0
"""PPO/GRPO actor and critic math (AReaL's ``areal.trainer.ppo``)."""

from areal_runtime.trainer.ppo.actor import PPOActor
from areal_runtime.trainer.ppo.critic import PPOCritic

__all__ = ["PPOActor", "PPOCritic"]
