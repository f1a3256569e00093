# SPDX-License-Identifier: Apache-2.0
"""The compact metrics of one step (loss, ratios, staleness, throughput) beside AReaL's keys.

The console row, ``StepResult.metrics`` and the tests read these short names; AReaL's own
keys (``ppo_actor/...``, ``timeperf/...``) follow them in the same dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from areal_runtime.trainer import stats
from areal_runtime.trainer.ppo_batch import PPOBatch


@dataclass
class UpdateResult:
    """What ``ppo_update`` reports: the token-weighted loss, the gradient norms, the stats
    ``grpo_loss_fn`` and the update logged under ``ppo_actor/update``."""

    loss: float
    grad_norms: list[float]
    lr: float
    stats: dict[str, float] = field(default_factory=dict)


def step_metrics(
    batch: PPOBatch,
    update: UpdateResult,
    actor: Any,
    version: int,
    areal_stats: dict[str, float],
    seconds: float,
) -> dict[str, Any]:
    """Every metric of the step: the compact names first, then ``areal_stats`` and timings."""

    def get(name: str, default: float) -> float:
        return float(update.stats.get(f"{stats.UPDATE}/{name}", default))

    mask = batch.loss_mask
    tokens = int(get("n_valid_tokens", 0))
    staleness_mean, staleness_max = _staleness(batch.versions, mask, version)
    behave_mean, behave_max = _behave_weights(batch, update, get)
    kl_ref = 0.0
    if batch.ref_logp is not None and batch.kl_rewards is not None:
        kl_ref = float(-(batch.kl_rewards[mask]).mean() / actor.kl_ctl)
    adv = batch.advantages
    return {
        "loss": update.loss,
        "importance_ratio_mean": get("importance_weight/avg", 1.0),
        "importance_ratio_max": get("importance_weight/max", 1.0),
        "behave_weight_mean": behave_mean,
        "behave_weight_max": behave_max,
        "filtered_fraction": get("rs_filtered_fraction", 0.0),
        "clip_fraction": get("clipped_tokens", 0.0) / max(tokens, 1),
        "approx_kl": get("approx_kl/avg", 0.0),
        "kl_ref": kl_ref,
        "entropy": get("entropy/avg", 0.0),
        "grad_norm": max(update.grad_norms) if update.grad_norms else 0.0,
        "lr": update.lr,
        "staleness_mean": staleness_mean,
        "staleness_max": staleness_max,
        "train_tokens": tokens,
        "train_seconds": seconds,
        "train_tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
        "advantage_abs_mean": (
            float(adv[mask].abs().mean()) if adv is not None and mask.any() else 0.0
        ),
        **areal_stats,
        **batch.timings,
    }


def _staleness(
    versions: torch.Tensor | None, mask: torch.Tensor, version: int
) -> tuple[float, float]:
    """Mean and max of how many versions behind the trained tokens were sampled."""
    if versions is None:
        return 0.0, 0.0
    v = versions[mask].float()
    if not v.numel():
        return 0.0, 0.0
    stale = version - v
    return float(stale.mean()), float(stale.max())


def _behave_weights(batch: PPOBatch, update: UpdateResult, get: Any) -> tuple[float, float]:
    """Mean and max of ``exp(prox - behave)``: logged by rejection sampling, else computed."""
    if f"{stats.UPDATE}/behave_imp_weight/avg" in update.stats:
        return get("behave_imp_weight/avg", 1.0), get("behave_imp_weight/max", 1.0)
    if batch.prox is not None and batch.loss_mask.any():
        weights = torch.exp(batch.prox - batch.behave)[batch.loss_mask]
        return float(weights.mean()), float(weights.max())
    return 1.0, 1.0
