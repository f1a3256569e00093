# SPDX-License-Identifier: Apache-2.0
"""What AReaL's trainer does around each update: statistics, saving, evaluation, recovery.

``PPOTrainer.train`` owns the loop; this owns the per-step bookkeeping, in AReaL's order: save
(``saver.freq_*``), evaluate (``evaluator.freq_*``), commit the statistics (``StatsLogger``),
dump a recover checkpoint (``recover.freq_*``). ``recover`` loads the last recover checkpoint
before the loop starts when ``recover.mode`` is on/auto.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from areal_runtime.api.io_struct import FinetuneSpec, SaveLoadMeta, StepInfo
from areal_runtime.utils.recover import RecoverHandler
from areal_runtime.utils.stats_logger import StatsLogger
from areal_runtime.utils.timeutil import freq_ctl_of

logger = logging.getLogger("areal_runtime.trainer")


class ActorCheckpoint:
    """The trainer's model and the learner's optimizer state as the train engine that
    ``RecoverHandler`` saves and loads (AReaL's ``engine.save(meta)`` / ``engine.load(meta)``):
    ``model/`` in Hugging Face format and ``training_state.pt``."""

    def __init__(self, trainer: Any, learner: Any) -> None:
        self.trainer = trainer
        self.learner = learner
        self.optimizer_loaded = False

    def save(self, meta: SaveLoadMeta) -> None:
        import torch

        from areal_runtime.trainer.checkpoint import quiet_hf_progress

        folder = Path(meta.path)
        with quiet_hf_progress():
            self.trainer.model.save_pretrained(str(folder / "model"))
        if meta.tokenizer is not None and hasattr(meta.tokenizer, "save_pretrained"):
            meta.tokenizer.save_pretrained(str(folder / "model"))
        if meta.with_optim:
            torch.save(self.learner.training_state(), folder / "training_state.pt")

    def load(self, meta: SaveLoadMeta) -> None:
        import torch
        from safetensors.torch import load_file

        folder = Path(meta.path)
        weights = {}
        for shard in sorted((folder / "model").glob("*.safetensors")):
            weights.update(load_file(str(shard)))
        model = self.trainer.model
        missing, _ = model.load_state_dict(weights, strict=False)
        tied = {k for k in missing if "lm_head" in k}
        if set(missing) - tied:
            raise ValueError(
                f"the recover checkpoint in {folder} does not fit actor.path's model (missing "
                f"{sorted(set(missing) - tied)[:3]}); use a new trial_name or "
                "recover.mode=disabled"
            )
        if hasattr(model, "tie_weights"):
            model.tie_weights()
        state_path = folder / "training_state.pt"
        self.optimizer_loaded = meta.with_optim and state_path.is_file()
        if self.optimizer_loaded:
            self.learner.load_training_state(torch.load(state_path, weights_only=False))


@dataclass(frozen=True)
class RunNames:
    experiment_name: str
    trial_name: str
    fileroot: str


def _fill_names(config: Any, section: Any) -> RunNames:
    """Fill a section's empty experiment / trial / fileroot from the experiment's (as AReaL's
    YAML interpolation does), so the section alone says where its files go."""
    names = run_names(config, section)
    section.experiment_name, section.trial_name = names.experiment_name, names.trial_name
    section.fileroot = names.fileroot
    return names


def run_names(config: Any, section: Any) -> RunNames:
    """A section's experiment / trial / fileroot, falling back to the experiment's own."""
    cluster = config.cluster if isinstance(config.cluster, dict) else {}
    return RunNames(
        experiment_name=section.experiment_name or config.experiment_name or "experiment",
        trial_name=section.trial_name or config.trial_name or "trial",
        fileroot=section.fileroot or cluster.get("fileroot") or "",
    )


class TrainingSession:
    """The bookkeeping of one ``train()`` call; see the module docstring."""

    def __init__(
        self, trainer: Any, learner: Any, steps: int, total_epochs: int | None, console: bool
    ) -> None:
        config = trainer.config
        self.trainer = trainer
        self.learner = learner
        self.ft_spec = FinetuneSpec(
            total_train_epochs=total_epochs or config.total_train_epochs,
            dataset_size=len(trainer.train_dataset),
            train_batch_size=config.train_dataset.batch_size,
        )
        # The run's length: the spec's, capped by total_train_steps (or the online count).
        self.total_steps = steps
        names = _fill_names(config, config.stats_logger)
        if names.fileroot:
            self.stats_logger = StatsLogger(
                config,
                self.ft_spec,
                console=sys.stdout if console else None,
                experiment_config=_as_dict(config),
                total_steps=steps,
            )
        else:
            if console:
                logger.warning(
                    "no fileroot (cluster.fileroot or stats_logger.fileroot): statistics are "
                    "printed but not written"
                )
            # Prints (or not) and writes nothing; its state still goes into recover dumps.
            self.stats_logger = StatsLogger(None, self.ft_spec, console=console, total_steps=steps)
        _fill_names(config, config.recover)
        self.recover_handler = RecoverHandler(config.recover, self.ft_spec)
        self.actor = ActorCheckpoint(trainer, learner)
        self.saver_ctl = freq_ctl_of(config.saver)
        self.eval_ctl = freq_ctl_of(
            config.evaluator, initial_epoch_value=config.evaluator.eval_before_train
        )
        self.global_steps_done = 0
        self.recovered_from: int | None = None

    def step_info(self, global_step: int) -> StepInfo:
        spe = self.ft_spec.steps_per_epoch
        return StepInfo(
            epoch=global_step // spe,
            epoch_step=global_step % spe,
            global_step=global_step,
            steps_per_epoch=spe,
        )

    # -- recovery ------------------------------------------------------------------------------
    def recover(self, loop: Any) -> None:
        """Load the last recover checkpoint into the model, learner, engine and loop."""
        info = self.recover_handler.load(
            self.actor, self.saver_ctl, self.eval_ctl, self.stats_logger, loop.cursor
        )
        if info is None:
            return
        done = info.last_step_info.global_step + 1
        update = self.trainer.engine.update_weights(self.learner.state_dict_for_engine())
        update.result()
        self.trainer.engine.set_version(done)
        loop.start_at(done)
        self.global_steps_done = done
        self.recovered_from = done
        print(
            f"recovered from {self.recover_handler.folder} after step {done}/{self.total_steps}"
            + ("" if self.actor.optimizer_loaded else " (optimizer state not loaded)"),
            flush=True,
        )

    # -- each step ---------------------------------------------------------------------------
    async def after_step(
        self,
        result: Any,
        loop: Any,
        eval_workflow: Any,
        eval_workflow_kwargs: dict[str, Any] | None,
    ) -> None:
        metrics = result.metrics
        global_step = int(metrics["step"]) - 1
        self.global_steps_done = global_step + 1
        info = self.step_info(global_step)
        epochs = int(info.epoch_step == info.steps_per_epoch - 1)
        metrics["timeperf/step"] = metrics.get("step_seconds", 0.0)
        saver = self.trainer.config.saver
        if self.saver_ctl.check(epochs=epochs, steps=1) and saver.fileroot:
            mark = time.perf_counter()
            self.trainer.save(self.trainer.checkpoint_dir(), step=global_step + 1)
            metrics["timeperf/save"] = time.perf_counter() - mark
        if (
            self.eval_ctl.check(epochs=epochs, steps=1)
            and eval_workflow is not None
            and self.trainer.valid_dataset
        ):
            mark = time.perf_counter()
            eval_stats = await self.evaluate(eval_workflow, eval_workflow_kwargs)
            metrics["timeperf/eval"] = time.perf_counter() - mark
            metrics.update(eval_stats)
            self.stats_logger.log_eval(global_step, eval_stats)
        self.stats_logger.commit(info.epoch, info.epoch_step, global_step, metrics)
        self.recover_handler.dump(
            self.actor,
            info,
            self.saver_ctl,
            self.eval_ctl,
            self.stats_logger,
            loop.cursor,
            tokenizer=self.trainer.tokenizer,
        )

    async def evaluate(
        self, workflow: Any, workflow_kwargs: dict[str, Any] | None
    ) -> dict[str, float]:
        """One pass over the valid dataset; AReaL's ``eval-rollout/*`` statistics."""
        from areal_runtime.utils import stats_tracker

        stats_tracker.get("eval-rollout").export()  # nothing stale from an earlier pass
        report = await self.trainer.evaluate_async(workflow, workflow_kwargs)
        self.trainer.last_eval = report
        stats = stats_tracker.get("eval-rollout").export()
        stats["eval-rollout/accepted"] = float(report.accepted)
        stats["eval-rollout/rejected"] = float(report.rejected)
        if "eval-rollout/reward" not in stats and report.accepted:
            stats["eval-rollout/reward"] = float(report.reward_mean)
        return stats

    def close(self) -> None:
        self.stats_logger.close()


def _as_dict(config: Any) -> dict[str, Any]:
    import dataclasses

    try:
        return dataclasses.asdict(config)
    except TypeError:
        return {}
