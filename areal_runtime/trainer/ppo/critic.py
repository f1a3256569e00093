# SPDX-License-Identifier: Apache-2.0
"""The PPO critic's loss (AReaL's ``areal.trainer.ppo.critic``).

GRPO, the only algorithm our trainer runs, has no critic; this is the value loss for code
ported from AReaL that trains one, with AReaL's statistics.
"""

from __future__ import annotations

from typing import Any

import torch

from areal_runtime.api.experiment_config import PPOCriticConfig
from areal_runtime.trainer.ppo.stats import infer_token_denominator
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.data import batched_call
from areal_runtime.utils.functional import ppo_critic_loss_fn


class PPOCritic:
    """Values of a critic engine for each trajectory (AReaL's ``PPOCritic``)."""

    def __init__(self, config: PPOCriticConfig, engine: Any) -> None:
        self.config = config
        self.engine = engine

    @torch.no_grad()
    def compute_values(self, data: list[dict[str, Any]]) -> list[torch.Tensor]:
        return batched_call(self._compute_values, data)

    def _compute_values(self, data: dict[str, Any]) -> torch.Tensor:
        self.engine.eval()
        return self.engine.forward(
            input_=data, aggregate_fn=lambda xs: torch.cat([x.squeeze(-1) for x in xs], dim=-1)
        )


def ppo_loss_fn(value: torch.Tensor, input_data: dict[str, Any], eps_clip: float) -> torch.Tensor:
    """The clipped value loss of one minibatch against ``returns``, logging AReaL's stats."""
    value = value.squeeze(-1).float()
    old_value = input_data["values"].float()
    target_value = input_data["returns"].float()
    loss_mask = input_data["loss_mask"].bool()
    loss, stat = ppo_critic_loss_fn(
        value=value,
        old_value=old_value,
        target_value=target_value,
        value_eps_clip=eps_clip,
        loss_mask=loss_mask,
    )
    clip_mask = stat["clip_mask"]
    stats_tracker.denominator(
        n_tokens=infer_token_denominator(input_data, value),
        n_valid_tokens=loss_mask,
        clipped_tokens=clip_mask,
    )
    stats_tracker.stat(
        new_value=value.detach(),
        old_value=old_value,
        target_value=target_value,
        critic_loss=stat["loss"],
        clip_ratio=clip_mask.float(),
        denominator="n_valid_tokens",
    )
    stats_tracker.stat(
        clipped_new_value=torch.where(clip_mask, value.detach(), 0.0),
        clipped_old_value=torch.where(clip_mask, old_value, 0.0),
        denominator="clipped_tokens",
    )
    return loss
