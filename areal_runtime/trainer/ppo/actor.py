# SPDX-License-Identifier: Apache-2.0
"""The PPO/GRPO actor's math (AReaL's ``areal.trainer.ppo.actor``): rewards, advantages, loss.

``grpo_loss_fn`` is the loss our ``Learner`` minimises for every minibatch: it resolves the
proximal logprobs (``prox_logp_method``), applies M2PO masking, calls ``ppo_actor_loss_fn`` or
``sapo_loss_fn`` and logs AReaL's statistics to ``stats_tracker``.

Rewards and advantages are computed in the *token frame*: position ``t`` of ``logprobs``,
``loss_mask``, ``versions`` and ``advantages`` describes token ``t`` of ``input_ids`` (the
trajectory convention). AReaL's ``PPOActor._compute_advantages`` rolls its tensors by one to
the *prediction frame* of its engine instead; the results are the same, shifted by one.
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from areal_runtime.api.experiment_config import (
    PPOActorConfig,
    RejectionSamplingConfig,
)
from areal_runtime.trainer.ppo.stats import infer_token_denominator
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.constants import (
    PROX_APPROX_METHOD_LINEAR,
    PROX_APPROX_METHOD_LOGLINEAR,
    PROX_APPROX_METHOD_ROLLOUT,
    PROX_APPROX_METHODS_ALL,
    PROX_LOGP_METHOD_LOGLINEAR,
    PROX_LOGP_METHOD_METRICS,
    PROX_LOGP_METHOD_RECOMPUTE,
    ProxLogpMethod,
)
from areal_runtime.utils.data import KLEstimator, Normalization, batched_call
from areal_runtime.utils.functional import (
    ppo_actor_loss_fn,
    reward_overlong_penalty,
    sapo_loss_fn,
)

logger = logging.getLogger("areal_runtime.PPOActor")


class PPOActor:
    """The actor's pre-update computations around a train engine (AReaL's ``PPOActor``).

    On one machine the update itself is ``areal_runtime.trainer.learner.Learner.step``, which
    runs the same functions as this class (``grpo_loss_fn``, ``shaped_rewards``,
    ``advantages``); ``PPOActor`` keeps AReaL's entry point for the proximal forward.
    """

    def __init__(self, config: PPOActorConfig, engine: Any) -> None:
        self.config = config
        self.engine = engine
        self.reward_bias = config.reward_bias
        self.reward_scaling = config.reward_scaling
        self.reward_clip = config.reward_clip
        self.kl_ctl = config.kl_ctl
        self.kl_estimator = KLEstimator(config.kl_estimator)
        self.adv_norm = Normalization(config.adv_norm) if config.adv_norm else None
        self.reward_norm = Normalization(config.reward_norm) if config.reward_norm else None
        self.discount = config.discount
        self.gae_lambda = config.gae_lambda
        self.mask_no_eos_with_zero = config.mask_no_eos_with_zero
        self.temperature = config.temperature
        self.m2_threshold = config.m2_threshold
        if config.use_decoupled_loss:
            logger.info(
                "decoupled PPO; proximal logprobs by %r, rejection sampling %s",
                config.prox_logp_method,
                config.rejection_sampling,
            )

    @torch.no_grad()
    def compute_logp(self, data: list[dict[str, Any]]) -> list[torch.Tensor] | None:
        """The engine's logprobs for each trajectory (one forward over them all)."""
        return batched_call(self._compute_logp, data)

    def _compute_logp(self, data: dict[str, Any]) -> torch.Tensor | None:
        self.engine.eval()
        return self.engine.forward(input_=data, aggregate_fn=lambda xs: torch.cat(xs, dim=-1))


# --- Rewards and advantages (the token-frame form of PPOActor._compute_advantages) ------------


def shaped_rewards(
    rewards: torch.Tensor,
    actor: PPOActorConfig,
    groups: torch.Tensor,
    loss_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """AReaL's reward pipeline: overlong penalty, ``(r + bias) * scaling``, clip, normalise.

    ``groups`` gives each row's group id (for group normalisation); ``loss_mask`` gives the
    completion lengths the overlong penalty needs.
    """
    score = rewards.float()
    if actor.overlong_reward_penalty:
        if loss_mask is None or actor.overlong_tokens is None:
            raise ValueError(
                "overlong_reward_penalty needs actor.overlong_tokens, "
                "actor.overlong_penalty_factor and the batch's loss_mask"
            )
        score = reward_overlong_penalty(
            {"rewards": score, "loss_mask": loss_mask},
            overlong_tokens=actor.overlong_tokens,
            overlong_penalty_factor=float(actor.overlong_penalty_factor or 0.0),
            max_response_length=actor.max_new_tokens,
        )["rewards"]
    score = (score + actor.reward_bias) * actor.reward_scaling
    score = score.clamp(-actor.reward_clip, actor.reward_clip)
    if actor.reward_norm is not None:
        score = Normalization(actor.reward_norm)(score, groups=groups)
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
        kl = KLEstimator(actor.kl_estimator)(old_logp, ref_logp)
        kl_rewards = -actor.kl_ctl * kl * mask
    rewards = kl_rewards.clone()
    positions = torch.arange(length).expand(n, length)
    last = torch.where(mask > 0, positions, -1).max(dim=1).values
    rows = torch.nonzero(last >= 0).squeeze(1)
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
        adv = Normalization(actor.adv_norm)(adv, mask, groups=groups)
    return adv, kl_rewards


# --- The loss ----------------------------------------------------------------------------------


def grpo_loss_fn(
    logprobs: torch.Tensor,
    entropy: torch.Tensor,
    input_data: dict[str, Any],
    eps_clip: float,
    eps_clip_higher: float | None,
    c_clip: float | None,
    rejection_sampling: RejectionSamplingConfig | None = None,
    m2_threshold: float | None = None,
    importance_sampling_level: str = "token",
    current_version: int | None = None,
    prox_logp_method: str = PROX_LOGP_METHOD_RECOMPUTE,
    use_sapo_loss: bool = False,
    sapo_tau_pos: float = 1.0,
    sapo_tau_neg: float = 1.05,
    use_decoupled_loss: bool = False,
    vocab_min_logits: torch.Tensor | None = None,
    vocab_max_logits: torch.Tensor | None = None,
) -> torch.Tensor:
    """The actor's loss on one minibatch, logging AReaL's statistics under the current scope.

    ``input_data`` holds ``logprobs`` (the behaviour policy's), ``advantages``, ``loss_mask``,
    ``prox_logp`` (``None`` when ``prox_logp_method='loglinear'`` skipped the forward; then
    ``versions`` and ``current_version`` give the approximation) and optionally ``versions``,
    ``cu_seqlens``, ``teacher_logp`` (distillation). Returns the scalar loss.
    """
    old_logp = input_data["logprobs"]
    advantages_ = input_data["advantages"]
    loss_mask = input_data["loss_mask"].bool()
    prox_logp_gt = input_data.get("prox_logp")
    entropy = entropy.detach()
    prox_logp = _resolve_proximal_logp(
        prox_logp_gt=prox_logp_gt,
        prox_logp_method=prox_logp_method,
        old_logp=old_logp,
        logprobs=logprobs.detach(),
        versions=input_data.get("versions"),
        current_version=current_version,
    )
    if m2_threshold is not None:
        loss_mask = _apply_m2po_masking(old_logp, prox_logp, loss_mask, m2_threshold)

    if use_sapo_loss:
        if use_decoupled_loss:
            raise ValueError(
                "SAPO is not compatible with `use_decoupled_loss=True`. "
                "Please set `actor.use_decoupled_loss=false` in your configuration."
            )
        loss, stat = sapo_loss_fn(
            logprobs=logprobs,
            old_logprobs=old_logp,
            advantages=advantages_,
            tau_pos=sapo_tau_pos,
            tau_neg=sapo_tau_neg,
            loss_mask=loss_mask,
            importance_sampling_level=importance_sampling_level,
            cu_seqlens=input_data.get("cu_seqlens"),
        )
    else:
        loss, stat = ppo_actor_loss_fn(
            logprobs=logprobs,
            proximal_logprobs=prox_logp,
            old_logprobs=old_logp,
            advantages=advantages_,
            eps_clip=eps_clip,
            loss_mask=loss_mask,
            eps_clip_higher=eps_clip_higher,
            c_clip=c_clip,
            rejection_sampling=rejection_sampling,
            importance_sampling_level=importance_sampling_level,
            cu_seqlens=input_data.get("cu_seqlens"),
        )

    rkl_stat = None
    teacher_logp = input_data.get("teacher_logp")
    if teacher_logp is not None:
        loss, rkl_stat = _distillation(
            loss, logprobs, old_logp, teacher_logp, loss_mask, input_data
        )

    stats_tracker.denominator(
        n_tokens=infer_token_denominator(input_data, loss_mask),
        n_valid_tokens=loss_mask,
        clipped_tokens=stat["clip_mask"],
        dual_clipped_tokens=stat["dual_clip_mask"],
    )
    if rkl_stat is not None:
        stats_tracker.stat(rkl_loss=rkl_stat.float(), denominator="n_valid_tokens")
    stats_tracker.stat(
        importance_weight=stat["importance_weight"].float(),
        approx_kl=stat["approx_kl"].float(),
        new_logp=logprobs.detach().float(),
        old_logp=old_logp.float(),
        entropy=entropy.float(),
        actor_loss=stat["loss"].float(),
        clip_ratio=stat["clip_mask"].float(),
        dual_clip_ratio=stat["dual_clip_mask"].float(),
        denominator="n_valid_tokens",
    )
    if "behave_imp_weight" in stat:
        stats_tracker.denominator(unclipped_behave_tokens=stat["behave_mask"])
        stats_tracker.stat(
            behave_imp_weight=stat["behave_imp_weight"].float(),
            behave_approx_kl=stat["behave_approx_kl"].float(),
            denominator="unclipped_behave_tokens",
        )
    if "filtered_fraction" in stat:
        stats_tracker.scalar(rs_filtered_fraction=stat["filtered_fraction"])
    if vocab_min_logits is not None and vocab_max_logits is not None:
        stats_tracker.stat(
            vocab_min_logits=vocab_min_logits.float(),
            vocab_max_logits=vocab_max_logits.float(),
            denominator="n_tokens",
        )
    if use_sapo_loss:
        stats_tracker.stat(
            sapo_soft_gate=stat["sapo_soft_gate"].float(),
            sapo_scaled_gate_pos=stat["sapo_scaled_gate_pos"].float(),
            sapo_scaled_gate_neg=stat["sapo_scaled_gate_neg"].float(),
            denominator="n_valid_tokens",
        )
    else:
        clip_mask = stat["clip_mask"]
        stats_tracker.stat(
            clipped_new_logp=torch.where(clip_mask, logprobs.detach(), 0.0).float(),
            clipped_old_logp=torch.where(clip_mask, old_logp, 0.0).float(),
            denominator="clipped_tokens",
        )

    counted = stat.get("behave_mask", loss_mask)
    _log_proximal_approximation_stats(
        prox_logp_method=prox_logp_method,
        prox_logp_gt=prox_logp_gt,
        old_logp=old_logp,
        logprobs=logprobs.detach(),
        versions=input_data.get("versions"),
        current_version=current_version,
        compute_logp_mask=counted,
    )
    if input_data.get("versions") is not None and current_version is not None:
        _log_version_staleness_stats(input_data["versions"], current_version, counted)
    return loss


def _distillation(
    loss: torch.Tensor,
    logprobs: torch.Tensor,
    old_logp: torch.Tensor,
    teacher_logp: torch.Tensor,
    loss_mask: torch.Tensor,
    input_data: dict[str, Any],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Joint RL + reverse-KL distillation to ``teacher_logp`` (pure distillation at weight 0)."""
    rl_weight = input_data.get("rl_loss_weight", 1.0)
    distill_weight = input_data.get("distill_loss_weight", 0.005)
    teacher_logp = teacher_logp.detach()
    tokens = loss_mask.sum().clamp(min=1)
    if rl_weight == 0:
        # Importance-sampled reverse KL: the samples came from the behaviour policy.
        weighted = torch.exp(logprobs - old_logp) * (teacher_logp - logprobs.detach()) * loss_mask
        return -distill_weight * weighted.sum() / tokens, -weighted
    penalty = (logprobs - teacher_logp) * loss_mask
    return rl_weight * loss + distill_weight * penalty.sum() / tokens, penalty


def compute_prox_logp_approximations(
    old_logp: torch.Tensor,
    logprobs: torch.Tensor,
    versions: torch.Tensor,
    current_version: int,
    method: str | None = None,
) -> dict[str, torch.Tensor]:
    """Approximate the proximal policy's logprobs without a forward pass.

    The proximal policy is version ``current_version - 1``; a token sampled at version ``v``
    sits a fraction ``alpha = (v_prox - v) / (v_theta - v)`` (clamped to [0, 1]) of the way
    from the behaviour policy (``old_logp``) to the current one (``logprobs``). ``loglinear``
    interpolates the logprobs, ``linear`` the probabilities, ``rollout`` keeps the behaviour
    logprobs. Prompt tokens (version < 0) keep ``old_logp``. Returns ``method`` only, or all.
    """
    v_behave = versions.float()
    v_theta = float(current_version)
    gap = v_theta - v_behave
    generated = versions >= 0
    alpha = torch.where(
        (gap > 0) & generated, (v_theta - 1.0 - v_behave) / gap, torch.zeros_like(v_behave)
    ).clamp(0.0, 1.0)
    out: dict[str, torch.Tensor] = {}
    for name in [method] if method else PROX_APPROX_METHODS_ALL:
        if name == PROX_APPROX_METHOD_LOGLINEAR:
            out[name] = old_logp + alpha * (logprobs - old_logp)
        elif name == PROX_APPROX_METHOD_LINEAR:
            mixed = (1 - alpha) * torch.exp(old_logp) + alpha * torch.exp(logprobs)
            out[name] = torch.log(mixed + 1e-10)
        elif name == PROX_APPROX_METHOD_ROLLOUT:
            out[name] = old_logp.clone()
        else:
            raise ValueError(f"unknown approximation {name!r}; one of {PROX_APPROX_METHODS_ALL}")
    return out


def _resolve_proximal_logp(
    prox_logp_gt: torch.Tensor | None,
    prox_logp_method: str,
    old_logp: torch.Tensor,
    logprobs: torch.Tensor,
    versions: torch.Tensor | None,
    current_version: int | None,
) -> torch.Tensor:
    """The proximal logprobs the loss uses: the recomputed ones, or the loglinear estimate.

    Raises ``ValueError`` when the recomputed ones are missing for a method that needs them,
    or when the estimate has no versions to work from; ``RuntimeError`` on NaN or Inf.
    """
    if prox_logp_gt is None:
        if not ProxLogpMethod(prox_logp_method).skips_forward_pass():
            raise ValueError(
                f"prox_logp is None but prox_logp_method='{prox_logp_method}'. "
                "This indicates compute_logp() was skipped incorrectly."
            )
        if versions is None:
            raise ValueError(
                f"prox_logp is None with prox_logp_method='{prox_logp_method}' but versions "
                "not available. Cannot proceed without either ground truth or approximation."
            )
    prox_logp = prox_logp_gt
    if (
        prox_logp_method == PROX_LOGP_METHOD_LOGLINEAR
        and prox_logp is None
        and versions is not None
        and current_version is not None
    ):
        prox_logp = compute_prox_logp_approximations(
            old_logp, logprobs, versions, current_version, method=PROX_APPROX_METHOD_LOGLINEAR
        )[PROX_APPROX_METHOD_LOGLINEAR]
    if prox_logp is None:
        raise RuntimeError(
            f"prox_logp is None after handling prox_logp_method='{prox_logp_method}' "
            "(loglinear needs current_version)."
        )
    if not bool(torch.isfinite(prox_logp).all()):
        raise RuntimeError(
            f"prox_logp contains NaN or Inf with prox_logp_method='{prox_logp_method}'."
        )
    return prox_logp


def _apply_m2po_masking(
    old_logp: torch.Tensor, prox_logp: torch.Tensor, loss_mask: torch.Tensor, m2_threshold: float
) -> torch.Tensor:
    """M2PO: drop the tokens with the largest ``(old - prox)^2`` until the mean of the rest
    is below ``m2_threshold`` (at least one token is kept)."""
    m2 = (old_logp - prox_logp).square()
    selected = m2[loss_mask]
    if selected.numel() == 0:
        return loss_mask
    ordered, order = torch.sort(selected, descending=True)
    keep_sorted = _get_m2po_loss_mask(ordered, m2_threshold)
    keep = torch.empty_like(keep_sorted)
    keep[order] = keep_sorted
    out = torch.zeros_like(loss_mask, dtype=torch.bool)
    out[loss_mask] = keep
    return out


def _get_m2po_loss_mask(sorted_m2: torch.Tensor, m2_threshold: float) -> torch.Tensor:
    """For values sorted high to low: False for the leading ones to drop, True for the rest."""
    n = sorted_m2.numel()
    keep = torch.ones_like(sorted_m2, dtype=torch.bool)
    if n == 0:
        return keep
    suffix_mean = sorted_m2.flip(0).cumsum(0).flip(0) / torch.arange(
        n, 0, -1, dtype=sorted_m2.dtype, device=sorted_m2.device
    )
    below = torch.nonzero(suffix_mean < m2_threshold).flatten()
    n_drop = int(below[0]) if below.numel() else n - 1
    keep[:n_drop] = False
    return keep


# --- Logging helpers -------------------------------------------------------------------------

_EPS = 1e-8


def _errors(truth: torch.Tensor, approx: torch.Tensor) -> dict[str, torch.Tensor]:
    diff = truth - approx
    return {
        "abs_error": diff.abs().float(),
        "rel_error": (diff / (truth.abs() + _EPS)).abs().float(),
        "squared_error": diff.square().float(),
    }


def _log_approximation_metrics_for_method(
    method_name: str,
    approx_logp: torch.Tensor,
    old_logp: torch.Tensor,
    logprobs: torch.Tensor,
    prox_logp_gt: torch.Tensor | None = None,
) -> None:
    """One approximation's logprobs and weights; with the recomputed ones, its errors too."""
    behave_w = torch.exp(approx_logp - old_logp).float()
    imp_w = torch.exp(logprobs - approx_logp).float()
    metrics = {
        f"{method_name}/approx_logp": approx_logp.float(),
        f"{method_name}/behave_imp_weight": behave_w,
        f"{method_name}/importance_weight": imp_w,
    }
    if prox_logp_gt is not None:
        for name, value in _errors(prox_logp_gt, approx_logp).items():
            metrics[f"{method_name}/{name}"] = value
        behave_err = _errors(torch.exp(prox_logp_gt - old_logp).float(), behave_w)
        imp_err = _errors(torch.exp(logprobs - prox_logp_gt).float(), imp_w)
        metrics[f"{method_name}/behave_imp_weight_abs_error"] = behave_err["abs_error"]
        metrics[f"{method_name}/behave_imp_weight_rel_error"] = behave_err["rel_error"]
        metrics[f"{method_name}/importance_weight_abs_error"] = imp_err["abs_error"]
        metrics[f"{method_name}/importance_weight_rel_error"] = imp_err["rel_error"]
    stats_tracker.stat(**metrics, denominator="n_valid_tokens")


def _log_proximal_approximation_stats(
    prox_logp_method: str,
    prox_logp_gt: torch.Tensor | None,
    old_logp: torch.Tensor,
    logprobs: torch.Tensor,
    versions: torch.Tensor | None,
    current_version: int | None,
    compute_logp_mask: torch.Tensor,
) -> None:
    """Under ``compute_logp/``: the recomputed logprobs, the approximations the method
    calls for (all of them, with errors, for 'metrics'), and the behaviour-policy drift."""
    with stats_tracker.scope("compute_logp"):
        stats_tracker.denominator(n_valid_tokens=compute_logp_mask.bool())
        if prox_logp_gt is not None:
            stats_tracker.stat(prox_logp_gt=prox_logp_gt.float(), denominator="n_valid_tokens")
        if versions is None or current_version is None:
            return
        approximations: dict[str, torch.Tensor] = {}
        truth = None
        if prox_logp_method == PROX_LOGP_METHOD_LOGLINEAR:
            approximations = compute_prox_logp_approximations(
                old_logp, logprobs, versions, current_version, PROX_APPROX_METHOD_LOGLINEAR
            )
        elif prox_logp_method == PROX_LOGP_METHOD_METRICS and prox_logp_gt is not None:
            # Every approximation against the recomputed truth: is skipping the forward safe?
            approximations = compute_prox_logp_approximations(
                old_logp, logprobs, versions, current_version
            )
            truth = prox_logp_gt
        for name, approx in approximations.items():
            _log_approximation_metrics_for_method(name, approx, old_logp, logprobs, truth)
        # How far training's policy drifted from the one that sampled (three KL estimators).
        log_ratio = (logprobs.float() - old_logp.float()).detach()
        stats_tracker.stat(
            kl_div_direct=-log_ratio,
            kl_div_taylor=log_ratio.square() / 2.0,
            kl_div_dual=log_ratio.exp() - 1 - log_ratio,
            denominator="n_valid_tokens",
        )


def _log_version_staleness_stats(
    versions: torch.Tensor, current_version: int, version_metrics_mask: torch.Tensor
) -> None:
    """Under ``version_stats/``: how many versions behind the proximal and current policies
    the trained tokens were sampled (prompt tokens, version < 0, are left out)."""
    with stats_tracker.scope("version_stats"):
        stats_tracker.denominator(n_valid_tokens=version_metrics_mask.bool())
        generated = version_metrics_mask.bool() & (versions >= 0)
        if not bool(generated.any()):
            return
        v_behave = versions.float()[generated]
        scalars: dict[str, float] = {}
        for name, reference in (("proximal", current_version - 1), ("theta", current_version)):
            lag = reference - v_behave
            scalars[f"sample_staleness_{name}_avg"] = float(lag.mean())
            scalars[f"sample_staleness_{name}_max"] = float(lag.max())
            scalars[f"sample_staleness_{name}_min"] = float(lag.min())
        stats_tracker.scalar(
            **scalars,
            v_theta=current_version,
            v_proximal=current_version - 1,
            n_valid_generated_tokens=int(generated.sum()),
        )
