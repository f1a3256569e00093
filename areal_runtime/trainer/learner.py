# SPDX-License-Identifier: Apache-2.0
"""The training side: one PPO/GRPO update of the actor from a batch of groups.

``Learner.step`` runs AReaL's actor verbs in order: ``compute_logp`` (the no-grad forwards),
``compute_advantages`` (shaped rewards, GRPO advantages) and ``ppo_update`` (one optimizer
step per minibatch). Runs on the trainer thread (one torch thread) while the engine keeps
generating on its own.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from areal_runtime.api.experiment_config import PPOConfig
from areal_runtime.trainer import stats
from areal_runtime.trainer.errors import TrainingInputError
from areal_runtime.trainer.logprobs import dropout_free, trained_logprobs
from areal_runtime.trainer.ppo.actor import advantages, grpo_loss_fn, shaped_rewards
from areal_runtime.trainer.ppo_batch import REQUIRED_KEYS, PPOBatch, prepare_batch
from areal_runtime.trainer.step_metrics import UpdateResult, step_metrics
from areal_runtime.utils import stats_tracker

__all__ = ["REQUIRED_KEYS", "Learner", "make_optimizer"]


def make_optimizer(model: Any, config: PPOConfig, total_steps: int) -> tuple[Any, Any]:
    """The actor's optimizer and schedule; ``actor.optimizer`` unset is refused, as in AReaL.

    AReaL's ``actor.optimizer`` defaults to None ("no training"): its engines then create no
    optimizer and the first update fails (``FSDPEngine.train_batch`` finds no ``optimizer``).
    Here the trainer refuses before any rollout starts, with the fix, rather than at the first
    update; it never trains with a default it made up.
    """
    opt_cfg = config.actor.optimizer
    if opt_cfg is None:
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
        batch = prepare_batch(groups, self.generator, self.config.actor.ppo_n_minibatches)
        self.compute_logp(batch)
        areal_stats = self.compute_advantages(batch)
        update = self.ppo_update(batch, version)
        areal_stats.update(update.stats)
        seconds = time.perf_counter() - start
        return step_metrics(batch, update, self.config.actor, version, areal_stats, seconds)

    def compute_logp(self, batch: PPOBatch) -> None:
        """The no-grad forwards before the update: proximal and KL-reference logprobs.

        The proximal policy is this trainer's weights before the update, recomputed unless
        ``prox_logp_method='loglinear'`` estimates it inside the loss (``prox`` stays None).
        When dropout is off, the first minibatch's own update forward (before any weight moves)
        gives its proximal logprobs, so only the other minibatches need a forward here.
        """
        actor = self.config.actor
        mark = time.perf_counter()
        old_is_prox = not actor.use_decoupled_loss and actor.recompute_logprob
        recompute = actor.should_compute_prox_logp()
        batch.fill_prox_in_update = (
            recompute
            and self.dropout_free
            and not (old_is_prox and self.ref is not None and actor.kl_ctl)
        )
        self.model.eval()
        if not recompute:
            batch.prox = None if actor.use_decoupled_loss else batch.behave
        elif batch.fill_prox_in_update:
            batch.prox = batch.behave.clone()
            if len(batch.minibatches) > 1:
                rest = torch.cat(batch.minibatches[1:])
                batch.prox[rest] = self._logp(self.model, batch.rows(rest), batch.loss_mask[rest])
        else:
            batch.prox = self._logp(self.model, batch.data, batch.loss_mask)
        self.model.train()
        batch.old = batch.prox if old_is_prox and batch.prox is not None else batch.behave
        batch.timings["timeperf/recompute_logp"] = time.perf_counter() - mark
        if self.ref is not None:
            mark = time.perf_counter()
            batch.ref_logp = self._logp(self.ref, batch.data, batch.loss_mask)
            batch.timings["timeperf/ref_logp"] = time.perf_counter() - mark

    def compute_advantages(self, batch: PPOBatch) -> dict[str, float]:
        """Shaped rewards and GRPO advantages; AReaL's pre-update statistics back."""
        actor = self.config.actor
        mark = time.perf_counter()
        score = shaped_rewards(batch.rewards, actor, batch.group_ids, batch.loss_mask)
        if actor.mask_no_eos_with_zero:
            no_eos = batch.attn.sum(1) == batch.attn.shape[1]
            score = torch.where(no_eos, torch.zeros_like(score), score)
        batch.score = score
        batch.advantages, batch.kl_rewards = advantages(
            score, batch.loss_mask, actor, batch.group_ids, batch.old, batch.ref_logp
        )
        batch.timings["timeperf/compute_advantage"] = time.perf_counter() - mark
        out = stats.sequence_stats(
            batch.rewards,
            batch.data["attention_mask"],
            batch.loss_mask,
            batch.advantages,
            batch.kl_rewards,
            score,
        )
        out.update(stats.config_scalars(actor))
        return out

    def ppo_update(self, batch: PPOBatch, version: int) -> UpdateResult:
        """One optimizer step per minibatch on the GRPO loss (``grpo_loss_fn``)."""
        mark = time.perf_counter()
        losses: list[tuple[float, int]] = []
        grad_norms: list[float] = []
        stats_tracker.export(reset=True)  # nothing left over from an interrupted step
        with stats_tracker.scope(stats.ACTOR), stats_tracker.scope("update"):
            for mb, idx in enumerate(batch.minibatches):
                loss = self._minibatch_loss(batch, idx, version, fill_prox=mb == 0)
                grad_norms.append(self._optimizer_step(loss))
                losses.append((float(loss.detach()), int(batch.loss_mask[idx].sum())))
        update = stats_tracker.export(reset=True)
        batch.timings["timeperf/train_step"] = time.perf_counter() - mark
        return UpdateResult(
            loss=sum(x * n for x, n in losses) / max(sum(n for _, n in losses), 1),
            grad_norms=grad_norms,
            lr=self.scheduler.get_last_lr()[0],
            stats=update,
        )

    def _minibatch_loss(
        self, batch: PPOBatch, idx: torch.Tensor, version: int, fill_prox: bool
    ) -> torch.Tensor:
        """The loss of rows ``idx``, with gradients to the actor."""
        actor = self.config.actor
        logp, entropy = trained_logprobs(
            self.model,
            batch.data["input_ids"][idx],
            batch.data["attention_mask"][idx],
            actor.temperature,
            batch.loss_mask[idx],
        )
        prox = batch.prox
        if fill_prox and batch.fill_prox_in_update:
            prox[idx] = logp.detach()  # type: ignore[index]
        versions = batch.versions
        assert batch.old is not None and batch.advantages is not None
        return grpo_loss_fn(
            logprobs=logp,
            entropy=entropy,
            input_data={
                "input_ids": batch.data["input_ids"][idx],
                "attention_mask": batch.attn[idx],
                "logprobs": batch.old[idx],
                "advantages": batch.advantages[idx],
                "loss_mask": batch.loss_mask[idx],
                "prox_logp": prox[idx] if prox is not None else None,
                **({"versions": versions[idx]} if versions is not None else {}),
            },
            eps_clip=actor.eps_clip,
            eps_clip_higher=actor.eps_clip_higher,
            c_clip=actor.c_clip,
            rejection_sampling=actor.rejection_sampling if actor.use_decoupled_loss else None,
            m2_threshold=actor.m2_threshold,
            importance_sampling_level=actor.importance_sampling_level,
            current_version=version,
            prox_logp_method=actor.prox_logp_method,
            use_sapo_loss=actor.use_sapo_loss,
            sapo_tau_pos=actor.sapo_tau_pos,
            sapo_tau_neg=actor.sapo_tau_neg,
            use_decoupled_loss=actor.use_decoupled_loss,
        )

    def _optimizer_step(self, loss: torch.Tensor) -> float:
        """Backward, clip, step; the gradient norm back. A non-finite gradient is skipped, as
        AReaL does; its engine's per-minibatch scalars are logged in the update scope."""
        clip = self.config.actor.optimizer.gradient_clipping  # type: ignore[union-attr]
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = float(
            torch.nn.utils.clip_grad_norm_(
                self.model.parameters(), clip if clip > 0 else float("inf")
            )
        )
        finite = math.isfinite(norm)
        stats_tracker.scalar(
            grad_norm=norm,
            lr=self.scheduler.get_last_lr()[0],
            update_successful=1.0 if finite else 0.0,
        )
        if finite:
            self.optimizer.step()
        self.scheduler.step()
        return norm
