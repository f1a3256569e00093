# SPDX-License-Identifier: Apache-2.0
"""The PPO/GRPO math of AReaL's actor, on one machine: rewards, advantages, the decoupled loss.

Tensors are in the *token frame*: position ``t`` of ``logprobs``, ``loss_mask``, ``versions``
and ``advantages`` describes token ``t`` of ``input_ids`` (the trajectory convention). AReaL
rolls its tensors by one to the *prediction frame* instead; the results are the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from areal_runtime.api.experiment_config import NormConfig, PPOActorConfig


def normalize(
    x: torch.Tensor,
    norm: NormConfig,
    groups: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Subtract the mean and divide by the std at batch or group level (AReaL's Normalization).

    ``x`` is ``[N]`` (rewards) or ``[N, L]`` (advantages, with ``mask``); ``groups`` ``[N]``
    gives each row's group id, so groups that lost members (a ``None`` episode) still line up.
    """
    x = x.double()
    m = torch.ones_like(x) if mask is None else mask.double()
    out = x.clone()

    def stats(sel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        xs, ms = x[sel], m[sel]
        n = ms.sum()
        mean = (xs * ms).sum() / n.clamp(min=1)
        var = (((xs - mean) ** 2) * ms).sum() / n.clamp(min=1)
        if norm.std_unbiased and n > 1:
            var = var * n / (n - 1)
        return mean, var.sqrt(), n

    everything = torch.ones(x.shape[0], dtype=torch.bool)
    batch_mean, batch_std, _ = stats(everything)
    for gid in groups.unique():
        sel = groups == gid
        mean, std, n = (
            stats(sel)
            if "group" in (norm.mean_level, norm.std_level)
            else (batch_mean, batch_std, None)
        )
        if norm.mean_level == "group":
            if norm.mean_leave1out and n is not None and n > 1:
                # Each element's baseline is the mean of the others in its group.
                total = (x[sel] * m[sel]).sum()
                centre = (total - x[sel] * m[sel]) / (n - 1)
            else:
                centre = mean
        elif norm.mean_level == "batch":
            centre = batch_mean
        else:
            centre = torch.zeros((), dtype=x.dtype)
        scale = {"group": std, "batch": batch_std}.get(norm.std_level)  # type: ignore[arg-type]
        value = x[sel] - centre
        if scale is not None:
            value = value / (scale + norm.eps)
        out[sel] = value
    return (out * m if mask is not None else out).float()


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token KL(pi || ref) estimators k1, k2, k3 (Schulman's), as AReaL's KLEstimator."""
    log_ratio = logp - ref_logp
    if estimator == "k1":
        return log_ratio
    if estimator == "k2":
        return log_ratio.pow(2) / 2
    return (torch.exp(-log_ratio) - 1 + log_ratio).clamp(max=10.0)  # k3


def shaped_rewards(
    rewards: torch.Tensor, actor: PPOActorConfig, groups: torch.Tensor
) -> torch.Tensor:
    """AReaL's reward pipeline: ``(r + bias) * scaling``, clip to ``reward_clip``, normalise."""
    score = (rewards.float() + actor.reward_bias) * actor.reward_scaling
    score = score.clamp(-actor.reward_clip, actor.reward_clip)
    if actor.reward_norm is not None:
        score = normalize(score, actor.reward_norm, groups)
    return score


def advantages(
    score: torch.Tensor,
    loss_mask: torch.Tensor,
    actor: PPOActorConfig,
    groups: torch.Tensor,
    old_logp: torch.Tensor | None = None,
    ref_logp: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE with zero values (GRPO has no critic): ``(advantages [N, L], kl_rewards [N, L])``.

    The sequence reward lands on its last trained token; a KL penalty to the reference,
    ``-kl_ctl * KL``, is added per trained token when ``ref_logp`` is given. Positions outside
    the loss mask are skipped (they neither add reward nor break the recursion), as in AReaL.
    """
    mask = loss_mask.float()
    n, length = mask.shape
    kl_rewards = torch.zeros(n, length)
    if ref_logp is not None and old_logp is not None and actor.kl_ctl:
        kl_rewards = -actor.kl_ctl * kl_estimate(old_logp, ref_logp, actor.kl_estimator) * mask
    rewards = kl_rewards.clone()
    positions = torch.arange(length).expand(n, length)
    last = torch.where(mask > 0, positions, -1).max(dim=1).values
    has_tokens = last >= 0
    rows = torch.nonzero(has_tokens).squeeze(1)
    rewards[rows, last[rows]] += score[rows]
    adv = torch.zeros(n, length)
    running = torch.zeros(n)
    decay = actor.discount * actor.gae_lambda
    for t in reversed(range(length)):
        m = mask[:, t]
        running = running * (1 - m) + (rewards[:, t] + decay * running) * m
        adv[:, t] = running
    adv = adv * mask
    if actor.adv_norm is not None:
        adv = normalize(adv, actor.adv_norm, groups, mask)
    return adv, kl_rewards


@dataclass
class LossStats:
    loss: float
    ratio_mean: float
    ratio_max: float
    clip_fraction: float
    approx_kl: float
    entropy: float
    behave_weight_mean: float
    behave_weight_max: float
    filtered_fraction: float
    tokens: int
    per_token: dict[str, torch.Tensor] = field(default_factory=dict)
    """AReaL's ``update``-scope values at each trained token (for avg/min/max)."""


def ppo_loss(
    logp: torch.Tensor,
    prox_logp: torch.Tensor,
    behave_logp: torch.Tensor,
    adv: torch.Tensor,
    loss_mask: torch.Tensor,
    entropy: torch.Tensor,
    actor: PPOActorConfig,
) -> tuple[torch.Tensor, LossStats]:
    """AReaL's PPO actor loss (token level), with the decoupled behaviour correction.

    ``ratio = pi_theta / pi_prox`` is clipped to ``[1 - eps_clip, 1 + eps_clip_higher]``; with
    ``use_decoupled_loss`` and ``rejection_sampling`` each token is also weighted by
    ``pi_prox / pi_behave`` (masked or clamped outside ``[lower, upper]``). The loss is the
    sum over the kept tokens divided by the trained tokens before rejection, as AReaL's (so
    masking stale tokens does not scale up the gradient of the others). ``filtered_fraction``
    is the share of trained tokens masked, or in clamp mode clamped.
    """
    mask = loss_mask.bool()
    trained = mask.sum().clamp(min=1)
    filtered = 0.0
    behave_w = None
    rs = actor.rejection_sampling
    if actor.use_decoupled_loss and rs is not None:
        log_w = (prox_logp - behave_logp).detach()
        log_w = torch.where(torch.isfinite(log_w), log_w, torch.zeros_like(log_w))
        if rs.level == "sequence":
            seq = (log_w * mask).sum(1) / mask.sum(1).clamp(min=1)
            log_w = seq.unsqueeze(1).expand_as(log_w)
        behave_w = torch.exp(log_w)
        low = rs.lower if rs.lower is not None else 0.0
        if rs.action == "mask":
            keep = (behave_w <= rs.upper) & (behave_w >= low)
            before = int(mask.sum())
            mask = mask & keep
            filtered = 1.0 - int(mask.sum()) / max(before, 1)
        else:
            clamped = behave_w.clamp(min=low, max=rs.upper)
            filtered = int(((clamped != behave_w) & mask).sum()) / max(int(mask.sum()), 1)
            behave_w = clamped
    count = mask.sum().clamp(min=1)
    if actor.importance_sampling_level == "sequence":
        seq = ((logp - prox_logp) * mask).sum(1) / mask.sum(1).clamp(min=1)
        ratio = torch.exp(seq).unsqueeze(1).expand_as(logp)
        # GSPO (AReaL's): each token takes its sequence's mean advantage, so the clip and the
        # sign are decided per sequence.
        seq_adv = (adv * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1)
        adv = torch.where(mask, seq_adv.expand_as(adv), torch.zeros_like(adv))
    else:
        ratio = torch.exp(logp - prox_logp)
    ratio = torch.where(mask, ratio, torch.zeros_like(ratio))
    high = actor.eps_clip if actor.eps_clip_higher is None else actor.eps_clip_higher
    clipped = ratio.clamp(1.0 - actor.eps_clip, 1.0 + high)
    pg1, pg2 = -adv * ratio, -adv * clipped
    clip_mask = (pg1.detach() < pg2.detach()) & mask
    pg = torch.max(pg1, pg2)
    if actor.c_clip is not None:
        pg3 = torch.sign(adv) * actor.c_clip * adv
        pg = torch.min(pg, pg3)
    if behave_w is not None:
        pg = pg * behave_w
    loss = torch.where(mask, pg, torch.zeros_like(pg)).sum() / trained
    with torch.no_grad():
        valid = ratio[mask]
        bw = behave_w[mask] if behave_w is not None else torch.exp(prox_logp - behave_logp)[mask]
        dual = (
            (torch.max(pg1, pg2) > pg3) & mask & (adv < 0)
            if actor.c_clip is not None
            else torch.zeros_like(mask)
        )
        per_token = {
            "importance_weight": valid,
            "approx_kl": (logp - prox_logp)[mask],
            "new_logp": logp.detach()[mask],
            "old_logp": prox_logp[mask],
            "entropy": entropy[mask],
            "actor_loss": pg.detach()[mask],
            "clip_ratio": clip_mask[mask].double(),
            "dual_clip_ratio": dual[mask].double(),
            "behave_imp_weight": bw,
            "behave_approx_kl": (prox_logp - behave_logp)[mask],
        }
        stats = LossStats(
            loss=float(loss),
            ratio_mean=float(valid.mean()) if valid.numel() else 1.0,
            ratio_max=float(valid.max()) if valid.numel() else 1.0,
            clip_fraction=float(clip_mask.sum() / count),
            approx_kl=float(((logp - prox_logp) * mask).sum() / count),
            entropy=float((entropy * mask).sum() / count),
            behave_weight_mean=float(bw.mean()) if bw.numel() else 1.0,
            behave_weight_max=float(bw.max()) if bw.numel() else 1.0,
            filtered_fraction=filtered,
            tokens=int(mask.sum()),
            per_token=per_token,
        )
    return loss, stats
