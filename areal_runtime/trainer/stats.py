# SPDX-License-Identifier: Apache-2.0
"""Per-step statistics under AReaL's keys, so curves compare with an AReaL run's.

AReaL's actor logs ``stats_tracker.stat(...)`` values (exported as ``KEY/avg``, ``KEY/min`` and
``KEY/max`` over the tokens or sequences of their denominator), denominators (exported as
counts) and scalars, under the ``ppo_actor`` scope (``ppo_actor/update`` for the loss terms);
timings under ``timeperf/``; the executor's ``rollout/accepted`` and ``rollout/rejected``.
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


def staleness_stats(versions: torch.Tensor, mask: torch.Tensor, version: int) -> dict[str, float]:
    """AReaL's ``version_stats``: how many versions behind the trained tokens were sampled.

    ``version`` is the trainer's version before this update (AReaL's ``v_theta``); the
    proximal policy is the one before it.
    """
    scope = f"{UPDATE}/version_stats"
    generated = mask.bool() & (versions >= 0)
    if not generated.any():
        return {}
    behave = versions[generated].double()
    out: dict[str, float] = {}
    for name, reference in (("proximal", version - 1), ("theta", version)):
        lag = reference - behave
        out[f"{scope}/sample_staleness_{name}_avg"] = float(lag.mean())
        out[f"{scope}/sample_staleness_{name}_max"] = float(lag.max())
        out[f"{scope}/sample_staleness_{name}_min"] = float(lag.min())
    out[f"{scope}/v_theta"] = float(version)
    out[f"{scope}/v_proximal"] = float(version - 1)
    out[f"{scope}/n_valid_generated_tokens"] = float(generated.sum())
    return out


def token_stats(per_token: dict[str, list[torch.Tensor]]) -> dict[str, float]:
    """The loss terms of every minibatch, over its trained tokens (AReaL's ``update`` scope)."""
    out: dict[str, float] = {}
    for name, chunks in per_token.items():
        if chunks:
            out.update(avg_min_max(f"{UPDATE}/{name}", torch.cat([c.reshape(-1) for c in chunks])))
    return out
