# SPDX-License-Identifier: Apache-2.0
"""The training side: one PPO/GRPO update of the actor from a batch of groups.

Runs on the trainer thread (one torch thread) while the engine keeps generating on its own.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from areal_runtime.api.experiment_config import PPOConfig
from areal_runtime.trainer import stats
from areal_runtime.trainer.logprobs import dropout_free, trained_logprobs
from areal_runtime.trainer.ppo.actor import advantages, grpo_loss_fn, shaped_rewards
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.data import concat_padded_tensors

REQUIRED_KEYS = ("input_ids", "loss_mask", "logprobs", "attention_mask", "rewards")


def make_optimizer(model: Any, config: PPOConfig, total_steps: int) -> tuple[Any, Any]:
    """The actor's optimizer and schedule; ``actor.optimizer`` unset is refused, as in AReaL.

    AReaL's ``actor.optimizer`` defaults to None ("no training"): its engines then create no
    optimizer and the first update fails (``FSDPEngine.train_batch`` finds no ``optimizer``).
    Here the trainer refuses before any rollout starts, with the fix, rather than at the first
    update; it never trains with a default it made up.
    """
    opt_cfg = config.actor.optimizer
    if opt_cfg is None:
        from areal_runtime.trainer.loop import TrainingInputError

        raise TrainingInputError(
            "actor.optimizer is unset, so there is nothing to update the actor with (AReaL "
            "creates no optimizer then and fails at its first update): add an optimizer "
            "section under actor in the YAML (type, lr, ...; AReaL's examples use adam and "
            "lr 1.7e-5), or +actor.optimizer.lr=1.7e-5 on the command line for the defaults "
            "with that learning rate"
        )
    params = [p for p in model.parameters() if p.requires_grad]
    if opt_cfg.type == "sgd":
        opt = torch.optim.SGD(params, lr=opt_cfg.lr, weight_decay=opt_cfg.weight_decay)
    else:  # adam, adam_bf16: AdamW in fp32 here
        opt = torch.optim.AdamW(
            params,
            lr=opt_cfg.lr,
            betas=(opt_cfg.beta1, opt_cfg.beta2),
            eps=opt_cfg.eps,
            weight_decay=opt_cfg.weight_decay,
        )
    updates = max(1, total_steps * config.actor.ppo_n_minibatches)
    warmup = int(opt_cfg.warmup_steps_proportion * updates)
    floor = opt_cfg.min_lr_ratio

    def factor(i: int) -> float:
        if warmup and i < warmup:
            return (i + 1) / warmup
        progress = min(1.0, (i - warmup) / max(1, updates - warmup))
        if opt_cfg.lr_scheduler_type == "linear":
            return floor + (1 - floor) * (1 - progress)
        if opt_cfg.lr_scheduler_type == "cosine":
            return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
        return 1.0

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


class Learner:
    """The actor being trained, its optimizer and (with ``kl_ctl``) the frozen start weights."""

    def __init__(self, model: Any, config: PPOConfig, total_steps: int) -> None:
        import copy

        self.config = config
        self.model = model
        if config.actor.disable_dropout:
            for module in model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.p = 0.0
        self.model.train()
        self.ref = None
        if config.actor.kl_ctl and config.ref is not None:
            self.ref = copy.deepcopy(model).eval()
            for p in self.ref.parameters():
                p.requires_grad_(False)
        self.optimizer, self.scheduler = make_optimizer(model, config, total_steps)
        self.dropout_free = dropout_free(model)
        self.generator = torch.Generator().manual_seed(config.seed)

    def training_state(self) -> dict[str, Any]:
        """Everything but the weights a resumed run needs to continue as this one would."""
        state: dict[str, Any] = {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "generator": self.generator.get_state(),
            "torch_rng": torch.get_rng_state(),
        }
        if self.ref is not None:  # the KL reference: the weights training started from
            state["ref"] = self.ref.state_dict()
        return state

    def load_training_state(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        if self.ref is not None and "ref" in state:
            self.ref.load_state_dict(state["ref"])

    def state_dict_for_engine(self) -> dict[str, torch.Tensor]:
        """A detached copy of the weights: the engine loads it while training goes on."""
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    @torch.no_grad()
    def _logp(
        self, model: Any, batch: dict[str, torch.Tensor], where: torch.Tensor
    ) -> torch.Tensor:
        """Logprobs at the trained positions ``where`` (the loss never reads the others)."""
        logp, _ = trained_logprobs(
            model, batch["input_ids"], batch["attention_mask"], self.config.actor.temperature, where
        )
        return logp

    def step(self, groups: list[dict[str, Any]], version: int) -> dict[str, Any]:
        """One update from ``groups`` (trajectory dicts, one per dataset row); metrics back."""
        torch.set_num_threads(1)
        start = time.perf_counter()
        actor = self.config.actor
        group_ids = torch.cat(
            [torch.full((int(g["input_ids"].shape[0]),), i) for i, g in enumerate(groups)]
        )
        batch = concat_padded_tensors(
            [{k: g[k] for k in (*REQUIRED_KEYS, "versions") if k in g} for g in groups]
        )
        attn = batch["attention_mask"].bool()
        loss_mask = batch["loss_mask"].bool() & attn
        loss_mask[:, 0] = False  # token 0 has no prediction
        behave = batch["logprobs"].float()
        rewards = batch["rewards"].float().reshape(-1)
        score = shaped_rewards(rewards, actor, group_ids, loss_mask)
        if actor.mask_no_eos_with_zero:
            no_eos = attn.sum(1) == attn.shape[1]
            score = torch.where(no_eos, torch.zeros_like(score), score)
        rows = torch.randperm(rewards.shape[0], generator=self.generator)
        n_mb = min(actor.ppo_n_minibatches, rewards.shape[0])
        minibatches = [rows[mb::n_mb] for mb in range(n_mb)]
        # The proximal policy: this trainer's weights before the update, recomputed unless
        # prox_logp_method='loglinear' estimates it inside the loss (prox stays None then).
        timings: dict[str, float] = {}
        mark = time.perf_counter()
        old_is_prox = not actor.use_decoupled_loss and actor.recompute_logprob
        recompute = actor.should_compute_prox_logp()
        fuse = (
            recompute
            and self.dropout_free
            and not (old_is_prox and self.ref is not None and actor.kl_ctl)
        )
        self.model.eval()
        prox: torch.Tensor | None
        if not recompute:
            prox = None if actor.use_decoupled_loss else behave
        elif fuse:
            # The first minibatch's own forward (before any update) gives its proximal logprobs,
            # so only the other minibatches need the extra no-grad forward.
            prox = behave.clone()
            if n_mb > 1:
                rest = torch.cat(minibatches[1:])
                prox[rest] = self._logp(self.model, _rows_of(batch, rest), loss_mask[rest])
        else:
            prox = self._logp(self.model, batch, loss_mask)
        self.model.train()
        old = prox if old_is_prox and prox is not None else behave
        timings["timeperf/recompute_logp"] = time.perf_counter() - mark
        mark = time.perf_counter()
        ref_logp = self._logp(self.ref, batch, loss_mask) if self.ref is not None else None
        if ref_logp is not None:
            timings["timeperf/ref_logp"] = time.perf_counter() - mark
        mark = time.perf_counter()
        adv, kl_rewards = advantages(score, loss_mask, actor, group_ids, old, ref_logp)
        timings["timeperf/compute_advantage"] = time.perf_counter() - mark
        areal_stats = stats.sequence_stats(
            rewards, batch["attention_mask"], loss_mask, adv, kl_rewards, score
        )
        areal_stats.update(stats.config_scalars(actor))
        mark = time.perf_counter()

        versions = batch.get("versions")
        losses: list[tuple[float, int]] = []
        grad_norms: list[float] = []
        clip = self.config.actor.optimizer.gradient_clipping  # type: ignore[union-attr]
        stats_tracker.export(reset=True)  # nothing left over from an interrupted step
        with stats_tracker.scope(stats.ACTOR), stats_tracker.scope("update"):
            for mb, idx in enumerate(minibatches):
                logp, entropy = trained_logprobs(
                    self.model,
                    batch["input_ids"][idx],
                    batch["attention_mask"][idx],
                    actor.temperature,
                    loss_mask[idx],
                )
                if fuse and mb == 0:
                    prox[idx] = logp.detach()  # type: ignore[index]
                loss = grpo_loss_fn(
                    logprobs=logp,
                    entropy=entropy,
                    input_data={
                        "input_ids": batch["input_ids"][idx],
                        "attention_mask": attn[idx],
                        "logprobs": old[idx],
                        "advantages": adv[idx],
                        "loss_mask": loss_mask[idx],
                        "prox_logp": prox[idx] if prox is not None else None,
                        **({"versions": versions[idx]} if versions is not None else {}),
                    },
                    eps_clip=actor.eps_clip,
                    eps_clip_higher=actor.eps_clip_higher,
                    c_clip=actor.c_clip,
                    rejection_sampling=actor.rejection_sampling
                    if actor.use_decoupled_loss
                    else None,
                    m2_threshold=actor.m2_threshold,
                    importance_sampling_level=actor.importance_sampling_level,
                    current_version=version,
                    prox_logp_method=actor.prox_logp_method,
                    use_sapo_loss=actor.use_sapo_loss,
                    sapo_tau_pos=actor.sapo_tau_pos,
                    sapo_tau_neg=actor.sapo_tau_neg,
                    use_decoupled_loss=actor.use_decoupled_loss,
                )
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(
                    self.model.parameters(), clip if clip > 0 else float("inf")
                )
                grad_norms.append(float(norm))
                finite = math.isfinite(float(norm))
                # AReaL's engine reports these per minibatch as scalars of the update scope.
                stats_tracker.scalar(
                    grad_norm=float(norm),
                    lr=self.scheduler.get_last_lr()[0],
                    update_successful=1.0 if finite else 0.0,
                )
                if finite:  # AReaL skips an update whose gradient is not finite
                    self.optimizer.step()
                self.scheduler.step()
                losses.append((float(loss.detach()), int(loss_mask[idx].sum())))
        update = stats_tracker.export(reset=True)
        areal_stats.update(update)
        seconds = time.perf_counter() - start
        timings["timeperf/train_step"] = time.perf_counter() - mark

        def get(name: str, default: float) -> float:
            return float(update.get(f"{stats.UPDATE}/{name}", default))

        tokens = int(get("n_valid_tokens", 0))
        staleness_mean = staleness_max = 0.0
        if versions is not None:
            v = versions[loss_mask].float()
            if v.numel():
                stale = version - v
                staleness_mean, staleness_max = float(stale.mean()), float(stale.max())
        if f"{stats.UPDATE}/behave_imp_weight/avg" in update:  # rejection sampling logged it
            behave_mean, behave_max = (
                get("behave_imp_weight/avg", 1.0),
                get("behave_imp_weight/max", 1.0),
            )
        elif prox is not None and loss_mask.any():
            weights = torch.exp(prox - behave)[loss_mask]
            behave_mean, behave_max = float(weights.mean()), float(weights.max())
        else:
            behave_mean = behave_max = 1.0
        kl_ref = (
            float(-(kl_rewards[loss_mask]).mean() / actor.kl_ctl) if ref_logp is not None else 0.0
        )
        return {
            "loss": sum(x * n for x, n in losses) / max(sum(n for _, n in losses), 1),
            "importance_ratio_mean": get("importance_weight/avg", 1.0),
            "importance_ratio_max": get("importance_weight/max", 1.0),
            "behave_weight_mean": behave_mean,
            "behave_weight_max": behave_max,
            "filtered_fraction": get("rs_filtered_fraction", 0.0),
            "clip_fraction": get("clipped_tokens", 0.0) / max(tokens, 1),
            "approx_kl": get("approx_kl/avg", 0.0),
            "kl_ref": kl_ref,
            "entropy": get("entropy/avg", 0.0),
            "grad_norm": max(grad_norms) if grad_norms else 0.0,
            "lr": self.scheduler.get_last_lr()[0],
            "staleness_mean": staleness_mean,
            "staleness_max": staleness_max,
            "train_tokens": tokens,
            "train_seconds": seconds,
            "train_tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
            "advantage_abs_mean": float(adv[loss_mask].abs().mean()) if loss_mask.any() else 0.0,
            **areal_stats,
            **timings,
        }


def _rows_of(batch: dict[str, torch.Tensor], idx: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"input_ids": batch["input_ids"][idx], "attention_mask": batch["attention_mask"][idx]}
