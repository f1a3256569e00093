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
from areal_runtime.trainer import ppo, stats
from areal_runtime.trainer.logprobs import dropout_free, trained_logprobs
from areal_runtime.utils.data import concat_padded_tensors

REQUIRED_KEYS = ("input_ids", "loss_mask", "logprobs", "attention_mask", "rewards")


def make_optimizer(model: Any, config: PPOConfig, total_steps: int) -> tuple[Any, Any]:
    opt_cfg = config.actor.optimizer
    if opt_cfg is None:
        from areal_runtime.api.experiment_config import OptimizerConfig

        opt_cfg = config.actor.optimizer = OptimizerConfig()
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
        score = ppo.shaped_rewards(rewards, actor, group_ids)
        if actor.mask_no_eos_with_zero:
            no_eos = attn.sum(1) == attn.shape[1]
            score = torch.where(no_eos, torch.zeros_like(score), score)
        rows = torch.randperm(rewards.shape[0], generator=self.generator)
        n_mb = min(actor.ppo_n_minibatches, rewards.shape[0])
        minibatches = [rows[mb::n_mb] for mb in range(n_mb)]
        # The proximal policy: this trainer's weights before the update (AReaL recomputes).
        timings: dict[str, float] = {}
        mark = time.perf_counter()
        old_is_prox = not actor.use_decoupled_loss and actor.recompute_logprob
        fuse = (
            actor.should_compute_prox_logp()
            and self.dropout_free
            and not (old_is_prox and self.ref is not None and actor.kl_ctl)
        )
        self.model.eval()
        if not actor.should_compute_prox_logp():
            prox = behave
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
        old = behave if not old_is_prox else prox
        timings["timeperf/recompute_logp"] = time.perf_counter() - mark
        mark = time.perf_counter()
        ref_logp = self._logp(self.ref, batch, loss_mask) if self.ref is not None else None
        if ref_logp is not None:
            timings["timeperf/ref_logp"] = time.perf_counter() - mark
        mark = time.perf_counter()
        adv, kl_rewards = ppo.advantages(score, loss_mask, actor, group_ids, old, ref_logp)
        timings["timeperf/compute_advantage"] = time.perf_counter() - mark
        areal_stats = stats.sequence_stats(
            rewards, batch["attention_mask"], loss_mask, adv, kl_rewards, score
        )
        areal_stats.update(stats.config_scalars(actor))
        mark = time.perf_counter()

        all_stats = []
        grad_norms: list[float] = []
        successes: list[float] = []
        lrs: list[float] = []
        clip = self.config.actor.optimizer.gradient_clipping  # type: ignore[union-attr]
        for mb, idx in enumerate(minibatches):
            logp, entropy = trained_logprobs(
                self.model,
                batch["input_ids"][idx],
                batch["attention_mask"][idx],
                actor.temperature,
                loss_mask[idx],
            )
            if fuse and mb == 0:
                prox[idx] = logp.detach()
            loss, mb_stats = ppo.ppo_loss(
                logp, prox[idx], behave[idx], adv[idx], loss_mask[idx], entropy, actor
            )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(
                self.model.parameters(), clip if clip > 0 else float("inf")
            )
            grad_norms.append(float(norm))
            finite = math.isfinite(float(norm))
            successes.append(1.0 if finite else 0.0)
            lrs.append(self.scheduler.get_last_lr()[0])
            if finite:  # AReaL skips an update whose gradient is not finite
                self.optimizer.step()
            self.scheduler.step()
            all_stats.append(mb_stats)
        seconds = time.perf_counter() - start
        timings["timeperf/train_step"] = time.perf_counter() - mark
        tokens = sum(s.tokens for s in all_stats)
        weight = [max(s.tokens, 1) for s in all_stats]
        per_token: dict[str, list[torch.Tensor]] = {}
        for s in all_stats:
            for name, values in s.per_token.items():
                per_token.setdefault(name, []).append(values)
        areal_stats.update(stats.token_stats(per_token))
        areal_stats[f"{stats.UPDATE}/rs_filtered_fraction"] = sum(
            s.filtered_fraction for s in all_stats
        ) / max(len(all_stats), 1)
        areal_stats[f"{stats.UPDATE}/grad_norm"] = sum(grad_norms) / max(len(grad_norms), 1)
        areal_stats[f"{stats.UPDATE}/lr"] = sum(lrs) / max(len(lrs), 1)
        areal_stats[f"{stats.UPDATE}/update_successful"] = sum(successes) / max(len(successes), 1)

        def mean(name: str) -> float:
            return sum(getattr(s, name) * w for s, w in zip(all_stats, weight, strict=True)) / sum(
                weight
            )

        versions = batch.get("versions")
        staleness_mean = staleness_max = 0.0
        if versions is not None:
            v = versions[loss_mask].float()
            if v.numel():
                stale = version - v
                staleness_mean, staleness_max = float(stale.mean()), float(stale.max())
            areal_stats.update(stats.staleness_stats(versions, loss_mask, version))
        kl_ref = (
            float(-(kl_rewards[loss_mask]).mean() / actor.kl_ctl) if ref_logp is not None else 0.0
        )
        return {
            "loss": mean("loss"),
            "importance_ratio_mean": mean("ratio_mean"),
            "importance_ratio_max": max(s.ratio_max for s in all_stats),
            "behave_weight_mean": mean("behave_weight_mean"),
            "behave_weight_max": max(s.behave_weight_max for s in all_stats),
            "filtered_fraction": mean("filtered_fraction"),
            "clip_fraction": mean("clip_fraction"),
            "approx_kl": mean("approx_kl"),
            "kl_ref": kl_ref,
            "entropy": mean("entropy"),
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
