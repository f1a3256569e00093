# SPDX-License-Identifier: Apache-2.0
"""One training step's batch: the padded groups and what each phase of the update adds.

:class:`~areal_runtime.trainer.learner.Learner` runs AReaL's three phases on it in order
(``compute_logp``, ``compute_advantages``, ``ppo_update``); each fills its own fields, so a
phase reads what the earlier ones produced instead of passing a dozen locals along.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from areal_runtime.utils.data import concat_padded_tensors

REQUIRED_KEYS = ("input_ids", "loss_mask", "logprobs", "attention_mask", "rewards")


@dataclass
class PPOBatch:
    """The step's tensors ([rows, length] unless noted) and the phases' results."""

    data: dict[str, torch.Tensor]
    group_ids: torch.Tensor  # [rows]: each row's group (dataset row), for group normalisation
    attn: torch.Tensor
    loss_mask: torch.Tensor  # trained positions: never token 0, which has no prediction
    behave: torch.Tensor  # the behaviour policy's logprobs (what the engine sampled with)
    rewards: torch.Tensor  # [rows]
    minibatches: list[torch.Tensor]  # row indices of each optimizer step
    # compute_logp: the proximal policy (None: estimated inside the loss), the old policy of
    # the advantages' KL term and the loss, the KL reference's logprobs.
    prox: torch.Tensor | None = None
    old: torch.Tensor | None = None
    ref_logp: torch.Tensor | None = None
    fill_prox_in_update: bool = False  # the first minibatch's update forward gives its prox
    # compute_advantages
    score: torch.Tensor | None = None  # [rows]: the shaped sequence reward
    advantages: torch.Tensor | None = None
    kl_rewards: torch.Tensor | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def versions(self) -> torch.Tensor | None:
        return self.data.get("versions")

    @property
    def n_rows(self) -> int:
        return int(self.rewards.shape[0])

    def rows(self, idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward's inputs for rows ``idx``."""
        return {
            "input_ids": self.data["input_ids"][idx],
            "attention_mask": self.data["attention_mask"][idx],
        }


def prepare_batch(
    groups: list[dict[str, Any]], generator: torch.Generator, n_minibatches: int
) -> PPOBatch:
    """Pad ``groups`` into one batch and deal its rows into shuffled minibatches."""
    group_ids = torch.cat(
        [torch.full((int(g["input_ids"].shape[0]),), i) for i, g in enumerate(groups)]
    )
    data = concat_padded_tensors(
        [{k: g[k] for k in (*REQUIRED_KEYS, "versions") if k in g} for g in groups]
    )
    attn = data["attention_mask"].bool()
    loss_mask = data["loss_mask"].bool() & attn
    loss_mask[:, 0] = False
    rewards = data["rewards"].float().reshape(-1)
    order = torch.randperm(rewards.shape[0], generator=generator)
    n_mb = min(n_minibatches, rewards.shape[0])
    return PPOBatch(
        data=data,
        group_ids=group_ids,
        attn=attn,
        loss_mask=loss_mask,
        behave=data["logprobs"].float(),
        rewards=rewards,
        minibatches=[order[mb::n_mb] for mb in range(n_mb)],
    )
