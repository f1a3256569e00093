# SPDX-License-Identifier: Apache-2.0
"""PPO, GSPO and SAPO losses and the staleness filter, with AReaL's signatures and semantics.

Inputs are either padded ``[batch, seq_len]`` tensors or packed ``[total_tokens]`` tensors with
``cu_seqlens`` marking where each sequence starts (``[0, len_0, len_0 + len_1, ...]``). Every
function here is elementwise except where a sequence-level aggregate is asked for, so the token
frame (our trainer's) and the prediction frame (AReaL's engine) give the same results.

One deliberate difference from AReaL: the KL metrics of rejection sampling read the sanitised
log ratio, so two ``-inf`` logprobs give a metric of 0 instead of NaN (as the ratio metric
already did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from areal_runtime.utils.data import kl_from_log_ratio

if TYPE_CHECKING:
    from areal_runtime.api.experiment_config import RejectionSamplingConfig


@torch.no_grad()
def masked_normalization(
    x: torch.Tensor,
    mask: torch.Tensor | None = None,
    dim: int | tuple[int, ...] | None = None,
    unbiased: bool = False,
    eps: float = 1e-5,
    high_precision: bool = True,
    all_reduce: bool = True,
    reduce_group: Any = None,
) -> torch.Tensor:
    """``(x - mean) / (std + eps)`` over ``dim`` (all dims by default), counting masked entries.

    Masked-out entries are zeroed before the statistics, as AReaL does; with ``all_reduce`` and
    an initialised process group the sums are reduced across ranks first.
    """
    import torch.distributed as dist

    x = x.to(torch.float64 if high_precision else torch.float32)
    dims = tuple(range(x.dim())) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
    if mask is None:
        count = torch.tensor(
            float(torch.Size([x.shape[d] for d in dims]).numel()), dtype=x.dtype, device=x.device
        )
    else:
        mask = mask.to(x.dtype)
        x = x * mask
        count = mask.sum(dims, keepdim=True)
    total = x.sum(dims, keepdim=True)
    total_sq = x.square().sum(dims, keepdim=True)
    if all_reduce and dist.is_initialized():
        for t in (count, total, total_sq):
            dist.all_reduce(t, op=dist.ReduceOp.SUM, group=reduce_group)
    mean = total / count
    var = total_sq / count - mean**2
    if unbiased:
        var = var * count / (count - 1)
    return ((x - mean) / (var.sqrt() + eps)).float()


def _segments(
    shape: torch.Size, cu_seqlens: torch.Tensor | None, device: torch.device, what: str
) -> tuple[torch.Tensor, int]:
    """Each flattened token's sequence index and the number of sequences.

    A padded ``[B, L]`` tensor is ``B`` sequences of ``L`` positions; a packed ``[T]`` tensor
    needs ``cu_seqlens``. One code path then serves both layouts.
    """
    if len(shape) == 2:
        batch, length = shape
        return torch.arange(batch, device=device).repeat_interleave(length), batch
    if cu_seqlens is None:
        raise ValueError(what)
    lengths = (cu_seqlens[1:] - cu_seqlens[:-1]).to(device=device, dtype=torch.long)
    return torch.arange(lengths.numel(), device=device).repeat_interleave(lengths), int(
        lengths.numel()
    )


def _segment_sum(values: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=values.dtype, device=values.device).index_add_(0, ids, values)


def _segment_count(mask: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=torch.long, device=mask.device).index_add_(0, ids, mask.long())


_CU_SEQLENS_FOR_GSPO = (
    "cu_seqlens is required for 1D tensors (packed format): each sequence's ratio is the "
    "geometric mean over its own tokens. For a single sequence pass "
    "cu_seqlens=torch.tensor([0, seq_len], dtype=torch.int32)."
)


def _sequence_level_ratio_and_advantages(
    log_ratio: torch.Tensor,
    advantages: torch.Tensor,
    loss_mask: torch.Tensor,
    cu_seqlens: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GSPO: every token takes its sequence's geometric-mean ratio and mean advantage.

    Means, not sums, so a sequence's gradient does not grow with its length; both are 0
    outside ``loss_mask``.
    """
    mask = loss_mask.bool()
    ids, n = _segments(log_ratio.shape, cu_seqlens, log_ratio.device, _CU_SEQLENS_FOR_GSPO)
    flat_mask = mask.reshape(-1)
    count = _segment_count(flat_mask, ids, n).clamp(min=1)
    zero = torch.zeros((), dtype=log_ratio.dtype, device=log_ratio.device)
    mean_log_ratio = _segment_sum(torch.where(flat_mask, log_ratio.reshape(-1), zero), ids, n)
    mean_log_ratio = mean_log_ratio / count.to(log_ratio.dtype)
    zero_adv = torch.zeros((), dtype=advantages.dtype, device=advantages.device)
    mean_adv = _segment_sum(torch.where(flat_mask, advantages.reshape(-1), zero_adv), ids, n)
    mean_adv = mean_adv / count.to(advantages.dtype)
    ratio = torch.where(flat_mask, torch.exp(mean_log_ratio)[ids], zero)
    adv = torch.where(flat_mask, mean_adv[ids], zero_adv)
    return ratio.reshape(log_ratio.shape), adv.reshape(advantages.shape)


@dataclass
class RejectionSamplingResult:
    """What ``apply_rejection_sampling`` decided.

    ``loss_mask``: the mask with filtered tokens removed (``mask``) or unchanged (``clamp``),
    in the input's dtype. ``behave_imp_weight``: pi_prox / pi_behave per token (clamped in
    ``clamp`` mode), 0 outside the returned mask. ``filtered_fraction``: share of the valid
    tokens masked or clamped, for logging.
    """

    loss_mask: torch.Tensor
    behave_imp_weight: torch.Tensor
    filtered_fraction: float


def _within(metric: torch.Tensor, config: RejectionSamplingConfig) -> torch.Tensor:
    """True where ``metric`` lies in ``[lower, upper]`` (no lower bound when ``lower`` is None)."""
    inside = metric <= config.upper
    if config.lower is not None:
        inside = inside & (metric >= config.lower)
    return inside


def apply_rejection_sampling(
    proximal_logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    loss_mask: torch.Tensor,
    cu_seqlens: torch.Tensor | None,
    config: RejectionSamplingConfig,
) -> RejectionSamplingResult:
    """Filter (``mask``) or bound (``clamp``) tokens whose policy moved too far since sampling.

    The metric is the ratio pi_prox / pi_behave or a KL estimate of it (``config.metric``),
    judged per token or per sequence (``config.level``, aggregated by ``config.agg``). For the
    ratio, sequences aggregate in log space (geometric mean), and the correction weight of
    every token of a sequence is then that sequence's geometric mean too, as GSPO does.
    """
    if proximal_logprobs.shape != old_logprobs.shape:
        raise ValueError(
            f"proximal_logprobs shape {tuple(proximal_logprobs.shape)} != old_logprobs shape "
            f"{tuple(old_logprobs.shape)}"
        )
    if proximal_logprobs.shape != loss_mask.shape:
        raise ValueError(
            f"proximal_logprobs shape {tuple(proximal_logprobs.shape)} != loss_mask shape "
            f"{tuple(loss_mask.shape)}"
        )
    if proximal_logprobs.dim() not in (1, 2):
        raise ValueError(
            f"Expected 1D (packed) or 2D (padded) tensors, got ndim={proximal_logprobs.dim()}"
        )
    shape = proximal_logprobs.shape
    valid = loss_mask.bool()
    # fp32 before subtracting (bf16 logprobs lose the difference); -inf - -inf is NaN: use 0.
    log_ratio = proximal_logprobs.detach().float() - old_logprobs.detach().float()
    log_ratio = torch.where(torch.isfinite(log_ratio), log_ratio, torch.zeros_like(log_ratio))
    if config.metric == "ratio":
        metric = torch.exp(log_ratio)
    elif config.metric in ("kl_k1", "kl_k2", "kl_k3"):
        metric = kl_from_log_ratio(log_ratio, config.metric[3:], clamp=False)
    else:
        raise ValueError(f"Unknown metric: {config.metric}")
    weight = torch.exp(log_ratio)
    low = config.lower if config.lower is not None else 0.0

    if config.level == "sequence":
        ids, n = _segments(
            shape,
            cu_seqlens,
            metric.device,
            "cu_seqlens is required for 1D packed tensors in sequence-level filtering.",
        )
        flat_valid = valid.reshape(-1)
        count = _segment_count(flat_valid, ids, n)
        in_log_space = config.metric == "ratio"
        values = (log_ratio if in_log_space else metric).reshape(-1)
        zero = torch.zeros((), dtype=values.dtype, device=values.device)
        if in_log_space:
            seq_log_mean = _segment_sum(torch.where(flat_valid, values, zero), ids, n)
            seq_log_mean = seq_log_mean / count.clamp(min=1).to(values.dtype)
            weight = torch.exp(seq_log_mean)[ids].reshape(shape)
        if config.agg in ("sum", "mean"):
            agg = _segment_sum(torch.where(flat_valid, values, zero), ids, n)
            if config.agg == "mean":
                agg = agg / count.clamp(min=1).to(values.dtype)
        elif config.agg == "max":
            agg = torch.full((n,), float("-inf"), dtype=values.dtype, device=values.device)
            agg = agg.scatter_reduce_(
                0, ids, values.masked_fill(~flat_valid, float("-inf")), reduce="amax"
            )
            # A sequence with no valid token has nothing to filter: judge it in bounds.
            agg = torch.where(count == 0, torch.zeros_like(agg), agg)
        else:
            raise ValueError(f"Unknown agg method: {config.agg}")
        seq_metric = torch.exp(agg) if in_log_space else agg
        in_bounds = _within(seq_metric, config)[ids].reshape(shape)
    else:
        in_bounds = _within(metric, config)

    if config.action == "mask":
        kept = valid & in_bounds
        new_mask = kept.to(loss_mask.dtype)
        changed = int((valid & ~in_bounds).sum())
    else:
        bounded = weight.clamp(min=low, max=config.upper)
        # Token level bounds every token; sequence level only those of out-of-bounds sequences.
        bounded = bounded if config.level == "token" else torch.where(in_bounds, weight, bounded)
        changed = int((valid & (bounded != weight)).sum())
        weight, kept, new_mask = bounded, valid, loss_mask
    weight = torch.where(kept, weight, torch.zeros_like(weight))
    return RejectionSamplingResult(
        loss_mask=new_mask,
        behave_imp_weight=weight,
        filtered_fraction=changed / max(int(valid.sum()), 1),
    )


def ppo_actor_loss_fn(
    logprobs: torch.Tensor,
    proximal_logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    eps_clip: float,
    loss_mask: torch.Tensor,
    eps_clip_higher: float | None = None,
    c_clip: float | None = None,
    rejection_sampling: RejectionSamplingConfig | None = None,
    importance_sampling_level: str = "token",
    cu_seqlens: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """The clipped PPO surrogate against the proximal policy, decoupled when asked.

    ``logprobs`` is pi_theta, ``proximal_logprobs`` pi_prox (the ratio's denominator) and
    ``old_logprobs`` pi_behave (the sampler's). With ``rejection_sampling`` each token is also
    weighted by pi_prox / pi_behave after filtering. The loss is summed over the kept tokens
    and divided by the valid tokens *before* filtering, so masking stale tokens does not scale
    up the others' gradient. ``importance_sampling_level='sequence'`` is GSPO (one ratio and
    one advantage per sequence). Returns the scalar loss and per-token stats (AReaL's keys).
    """
    loss_mask = loss_mask.bool()
    denominator = loss_mask.count_nonzero().clamp(min=1)
    behave_imp_weight = None
    filtered_fraction = 0.0
    if rejection_sampling is not None:
        rs = apply_rejection_sampling(
            proximal_logprobs, old_logprobs, loss_mask, cu_seqlens, rejection_sampling
        )
        loss_mask = rs.loss_mask.bool()
        behave_imp_weight = rs.behave_imp_weight
        filtered_fraction = rs.filtered_fraction

    if importance_sampling_level == "sequence":
        ratio, advantages = _sequence_level_ratio_and_advantages(
            logprobs - proximal_logprobs, advantages, loss_mask, cu_seqlens
        )
    elif importance_sampling_level == "token":
        ratio = torch.where(
            loss_mask, torch.exp(logprobs - proximal_logprobs), torch.zeros_like(logprobs)
        )
    else:
        raise ValueError(
            f"Invalid importance_sampling_level: {importance_sampling_level}. "
            "Must be 'token' or 'sequence'."
        )

    high = eps_clip if eps_clip_higher is None else eps_clip_higher
    clipped_ratio = ratio.clamp(1.0 - eps_clip, 1.0 + high)
    pg_loss1 = -advantages * ratio
    pg_loss2 = -advantages * clipped_ratio
    clip_mask = pg_loss1.detach() < pg_loss2.detach()
    pg_loss = torch.max(pg_loss1, pg_loss2)
    if c_clip is not None:
        if c_clip <= 1.0:
            raise ValueError(f"c_clip must be > 1.0 (dual clip), got {c_clip}")
        pg_loss3 = torch.sign(advantages) * c_clip * advantages
        dual_clip_mask = pg_loss3.detach() < pg_loss.detach()
        pg_loss = torch.min(pg_loss, pg_loss3)
    else:
        dual_clip_mask = torch.zeros_like(clip_mask)

    if behave_imp_weight is not None:
        behave_mask = (behave_imp_weight > 0) & loss_mask
        behave_approx_kl = proximal_logprobs.detach() - old_logprobs.detach()
        behave_approx_kl = torch.where(
            behave_mask, behave_approx_kl, torch.zeros_like(behave_approx_kl)
        )
        pg_loss = pg_loss * behave_imp_weight

    per_token_loss = pg_loss.detach()
    loss = torch.where(loss_mask, pg_loss, torch.zeros_like(pg_loss)).sum() / denominator
    stat: dict[str, Any] = {
        "loss": per_token_loss,
        "importance_weight": ratio.detach(),
        "approx_kl": (logprobs - proximal_logprobs).detach(),
        "clip_mask": clip_mask & loss_mask,
        "dual_clip_mask": dual_clip_mask & loss_mask,
    }
    if behave_imp_weight is not None:
        stat.update(
            behave_approx_kl=behave_approx_kl.detach(),
            behave_imp_weight=behave_imp_weight.detach(),
            behave_mask=behave_mask,
            filtered_fraction=filtered_fraction,
        )
    return loss, stat


def sapo_loss_fn(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    tau_pos: float,
    tau_neg: float,
    loss_mask: torch.Tensor,
    importance_sampling_level: str = "token",
    cu_seqlens: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """SAPO: a sigmoid gate on the ratio instead of PPO's hard clip, so gradients stay smooth.

    The gate is ``sigmoid(tau * (ratio - 1)) * 4 / tau`` with ``tau_pos`` for positive
    advantages and ``tau_neg`` otherwise; the ``4 / tau`` makes the gradient at ratio 1 the
    same for every temperature. The stats carry an all-False ``clip_mask`` so PPO's logging
    works unchanged.
    """
    if tau_pos <= 0 or tau_neg <= 0:
        raise ValueError("SAPO temperatures (tau_pos, tau_neg) must be positive.")
    loss_mask = loss_mask.bool()
    denominator = loss_mask.count_nonzero().clamp(min=1)
    advantages = advantages.detach()
    log_ratio = logprobs - old_logprobs
    if importance_sampling_level == "sequence":
        ratio, advantages = _sequence_level_ratio_and_advantages(
            log_ratio, advantages, loss_mask, cu_seqlens
        )
    elif importance_sampling_level == "token":
        ratio = torch.exp(log_ratio)
    else:
        raise ValueError(
            f"Invalid importance_sampling_level: {importance_sampling_level}. "
            "Must be 'token' or 'sequence'."
        )
    gate_pos = torch.sigmoid(tau_pos * (ratio - 1.0)) * (4.0 / tau_pos)
    gate_neg = torch.sigmoid(tau_neg * (ratio - 1.0)) * (4.0 / tau_neg)
    gate = torch.where(advantages > 0, gate_pos, gate_neg)
    pg_loss = -gate * advantages
    loss = torch.where(loss_mask, pg_loss, torch.zeros_like(pg_loss)).sum() / denominator
    no_clip = torch.zeros_like(loss_mask, dtype=torch.bool)
    stat = {
        "loss": pg_loss.detach(),
        "importance_weight": ratio.detach(),
        "approx_kl": log_ratio.detach(),
        "clip_mask": no_clip,
        "dual_clip_mask": no_clip.clone(),
        "sapo_soft_gate": gate.detach(),
        "sapo_scaled_gate_pos": gate_pos.detach(),
        "sapo_scaled_gate_neg": gate_neg.detach(),
    }
    return loss, stat


def ppo_critic_loss_fn(
    value: torch.Tensor,
    old_value: torch.Tensor,
    target_value: torch.Tensor,
    value_eps_clip: float,
    loss_mask: torch.Tensor | None = None,
    loss_fn_type: str = "mse",
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Clipped value loss: the worse of the raw and the clipped prediction's error.

    ``loss_fn_type`` is ``'mse'`` (half squared error) or ``'huber'`` (delta 10). Inputs are
    fp32 tensors of one shape (padded or packed); the mean runs over ``loss_mask``.
    """
    for name, t in (("value", value), ("old_value", old_value), ("target_value", target_value)):
        if t.dtype != torch.float32:
            raise ValueError(f"{name} must be float32, got {t.dtype}")
    if loss_fn_type == "mse":

        def error(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return 0.5 * (x - y) ** 2

    elif loss_fn_type == "huber":

        def error(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            diff = (x - y).abs()
            return torch.where(diff < 10.0, 0.5 * diff**2, 10.0 * (diff - 5.0))

    else:
        raise NotImplementedError(f"Unknown loss fn type: {loss_fn_type}")
    if target_value.is_inference():
        target_value = target_value.clone()  # autograd refuses inference tensors
    raw = error(value, target_value)
    clipped = error(
        old_value + (value - old_value).clamp(-value_eps_clip, value_eps_clip), target_value
    )
    loss = torch.max(raw, clipped)
    with torch.no_grad():
        clip_mask = clipped.detach() > raw.detach()
        if loss_mask is not None:
            clip_mask = clip_mask & loss_mask.bool()
        stat = {"clip_mask": clip_mask, "loss": loss.detach()}
    if loss_mask is not None:
        mask = loss_mask.bool()
        loss = torch.where(mask, loss, torch.zeros_like(loss)).sum() / mask.count_nonzero()
    else:
        loss = loss.mean()
    return loss, stat


def reward_overlong_penalty(
    data: dict[str, Any],
    overlong_tokens: int,
    overlong_penalty_factor: float,
    max_response_length: int,
) -> dict[str, Any]:
    """DAPO's soft length penalty: completions past ``max_response_length - overlong_tokens``
    lose up to ``overlong_penalty_factor`` reward, linearly, reaching it at the budget's end.

    The length is the number of trained tokens per row; ``data["rewards"]`` is replaced.
    """
    lengths = data["loss_mask"].sum(dim=-1).to(torch.float32)
    excess = lengths - (max_response_length - overlong_tokens)
    penalty = (-excess / overlong_tokens * overlong_penalty_factor).clamp(max=0.0)
    rewards = data["rewards"]
    data["rewards"] = rewards + penalty.to(device=rewards.device, dtype=rewards.dtype)
    return data
