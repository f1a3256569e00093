# SPDX-License-Identifier: Apache-2.0
"""The PPO losses and the staleness filter (AReaL's ``areal.utils.functional``).

The trainer calls these very functions; they are not a copy kept for compatibility.
"""

from areal_runtime.utils.functional.functional import (
    RejectionSamplingResult,
    apply_rejection_sampling,
    masked_normalization,
    ppo_actor_loss_fn,
    ppo_critic_loss_fn,
    reward_overlong_penalty,
    sapo_loss_fn,
)

__all__ = [
    "RejectionSamplingResult",
    "apply_rejection_sampling",
    "masked_normalization",
    "ppo_actor_loss_fn",
    "ppo_critic_loss_fn",
    "reward_overlong_penalty",
    "sapo_loss_fn",
]
