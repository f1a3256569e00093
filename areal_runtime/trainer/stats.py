# SPDX-License-Identifier: Apache-2.0
"""Per-step statistics under AReaL's keys, so curves compare with an AReaL run's.

AReaL's actor logs ``stats_tracker.stat(...)`` values (exported as ``KEY/avg``, ``KEY/min`` and
``KEY/max`` over the tokens or sequences of their denominator), denominators (exported as
counts) and scalars, under the ``ppo_actor`` scope; timings under ``timeperf/``; the
executor's ``rollout/accepted`` and ``rollout/rejected``. Everything goes through the one
``stats_tracker`` (``areal_runtime.utils.stats_tracker``), as the workflows' statistics do: the
loss terms under ``ppo_actor/update`` are logged by ``grpo_loss_fn`` itself
(``trainer/ppo/actor.py``); this module records what AReaL's ``ppo_update`` logs before the
update.
"""

from __future__ import annotations

from typing import Any

import torch

from areal_runtime.utils import stats_tracker

ACTOR = "ppo_actor"
UPDATE = "ppo_actor/update"


def sequence_stats(
    rewards: torch.Tensor,
    attention_mask: torch.Tensor,
    loss_mask: torch.Tensor,
    advantages: torch.Tensor,
    kl_rewards: torch.Tensor,
    score: torch.Tensor,
) -> dict[str, float]:
    """What AReaL's ``ppo_update`` logs before the update: rewards, lengths, advantages.

    Recorded as AReaL does, through the ``stats_tracker`` API (denominators, then ``stat``
    values over them), on a tracker of its own so the update's export is left alone.
    """
    attn = attention_mask.bool()
    mask = loss_mask.bool()
    seqlens = attn.sum(-1).float()
    correct = rewards > 0
    # AReaL's tot_rewards: the KL rewards plus the shaped score on each sequence's last token.
    tot = kl_rewards.clone()
    positions = torch.arange(mask.shape[1]).expand_as(mask)
    last = torch.where(mask, positions, -1).max(dim=1).values
    rows = torch.nonzero(last >= 0).squeeze(1)
    tot[rows, last[rows]] += score[rows]
    tracker = stats_tracker.DistributedStatsTracker()
    with tracker.scope(ACTOR):
        tracker.denominator(
            n_seqs=torch.ones_like(correct),
            n_tokens=attn,
            n_valid_tokens=mask,
            correct_n_seqs=correct,
            incorrect_n_seqs=~correct,
        )
        tracker.stat(correct_seq_len=seqlens, denominator="correct_n_seqs")
        tracker.stat(incorrect_seq_len=seqlens, denominator="incorrect_n_seqs")
        tracker.stat(
            advantages=advantages.float(),
            kl_rewards=kl_rewards.float(),
            final_reward=tot.float(),
            denominator="n_valid_tokens",
        )
        tracker.stat(
            no_eos_ratios=(attn.sum(-1) == attn.shape[-1]).float(),
            task_reward=rewards.float(),
            prompt_len=(attn.sum(-1) - mask.sum(-1)).float(),
            seq_len=seqlens,
            denominator="n_seqs",
        )
    return tracker.export(reset=True)


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
