# SPDX-License-Identifier: Apache-2.0
"""Per-step statistics under AReaL's keys, so curves compare with an AReaL run's.

AReaL's actor logs ``stats_tracker.stat(...)`` values (exported as ``KEY/avg``, ``KEY/min`` and
``KEY/max`` over the tokens or sequences of their denominator), denominators (exported as
counts) and scalars, under the ``ppo_actor`` scope; timings under ``timeperf/``; the
executor's ``rollout/accepted`` and ``rollout/rejected``. The loss terms under
``ppo_actor/update`` are logged by ``grpo_loss_fn`` itself (``trainer/ppo/actor.py``); this
module computes what AReaL's ``ppo_update`` logs before the update.
"""

from __future__ import annotations

from typing import Any

import torch

ACTOR = "ppo_actor"
UPDATE = "ppo_actor/update"


def avg_min_max(key: str, values: torch.Tensor) -> dict[str, float]:
    """``KEY/avg``, ``KEY/min``, ``KEY/max`` of the selected values (nothing when empty)."""
    values = values.detach().double().reshape(-1)
    if not values.numel():
        return {}
    return {
        f"{key}/avg": float(values.mean()),
        f"{key}/min": float(values.min()),
        f"{key}/max": float(values.max()),
    }


def sequence_stats(
    rewards: torch.Tensor,
    attention_mask: torch.Tensor,
    loss_mask: torch.Tensor,
    advantages: torch.Tensor,
    kl_rewards: torch.Tensor,
    score: torch.Tensor,
) -> dict[str, float]:
    """What AReaL's ``ppo_update`` logs before the update: rewards, lengths, advantages."""
    attn = attention_mask.bool()
    mask = loss_mask.bool()
    seqlens = attn.sum(-1).double()
    correct = rewards > 0
    # AReaL's tot_rewards: the KL rewards plus the shaped score on each sequence's last token.
    tot = kl_rewards.clone()
    positions = torch.arange(mask.shape[1]).expand_as(mask)
    last = torch.where(mask, positions, -1).max(dim=1).values
    rows = torch.nonzero(last >= 0).squeeze(1)
    tot[rows, last[rows]] += score[rows]
    out: dict[str, float] = {
        f"{ACTOR}/n_seqs": float(rewards.numel()),
        f"{ACTOR}/n_tokens": float(attn.sum()),
        f"{ACTOR}/n_valid_tokens": float(mask.sum()),
        f"{ACTOR}/correct_n_seqs": float(correct.sum()),
        f"{ACTOR}/incorrect_n_seqs": float((~correct).sum()),
    }
    out.update(avg_min_max(f"{ACTOR}/correct_seq_len", seqlens[correct]))
    out.update(avg_min_max(f"{ACTOR}/incorrect_seq_len", seqlens[~correct]))
    out.update(avg_min_max(f"{ACTOR}/advantages", advantages[mask]))
    out.update(avg_min_max(f"{ACTOR}/kl_rewards", kl_rewards[mask]))
    out.update(avg_min_max(f"{ACTOR}/final_reward", tot[mask]))
    out.update(avg_min_max(f"{ACTOR}/no_eos_ratios", (attn.sum(-1) == attn.shape[-1]).double()))
    out.update(avg_min_max(f"{ACTOR}/task_reward", rewards.double()))
    out.update(avg_min_max(f"{ACTOR}/prompt_len", (attn.sum(-1) - mask.sum(-1)).double()))
    out.update(avg_min_max(f"{ACTOR}/seq_len", seqlens))
    return out


def config_scalars(actor: Any) -> dict[str, float]:
    """The clipping settings AReaL logs as scalars, so a run's file says what it used."""
    out = {
        f"{ACTOR}/mask_no_eos_with_zero": float(actor.mask_no_eos_with_zero),
        f"{ACTOR}/eps_clip": float(actor.eps_clip),
        f"{ACTOR}/use_dual_clip": 0.0 if actor.c_clip is None else 1.0,
    }
    if actor.c_clip is not None:
        out[f"{ACTOR}/c_clip"] = float(actor.c_clip)
    rs = actor.rejection_sampling
    if rs is not None:
        out[f"{ACTOR}/rs_upper"] = float(rs.upper)
        if rs.lower is not None:
            out[f"{ACTOR}/rs_lower"] = float(rs.lower)
    return out
