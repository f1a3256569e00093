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
from typing import Any

from areal_runtime.utils.recover import RecoverHandler, RecoverInfo, StepInfo
from areal_runtime.utils.stats_logger import StatsLogger
from areal_runtime.utils.timeutil import freq_ctl_of

logger = logging.getLogger("areal_runtime.trainer")


@dataclass(frozen=True)
class FinetuneSpec:
    """AReaL's ``FinetuneSpec``: the run's length in epochs and steps."""

    total_train_epochs: int
    dataset_size: int
    train_batch_size: int
    total_train_steps: int

    @property
    def steps_per_epoch(self) -> int:
        return max(1, self.dataset_size // self.train_batch_size)


@dataclass(frozen=True)
class RunNames:
    experiment_name: str
    trial_name: str
    fileroot: str


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
            total_train_steps=steps,
        )
        names = run_names(config, config.stats_logger)
        self.stats_logger: StatsLogger | None = None
        if names.fileroot:
            section = config.stats_logger
            section.experiment_name, section.trial_name = names.experiment_name, names.trial_name
            section.fileroot = names.fileroot
            self.stats_logger = StatsLogger(
                config,
                self.ft_spec,
                console=sys.stdout if console else None,
                experiment_config=_as_dict(config),
            )
        elif console:
            logger.warning(
                "no fileroot (cluster.fileroot or stats_logger.fileroot): statistics are printed "
                "but not written"
            )
            self.stats_logger = StatsLogger.console_only(self.ft_spec)
        recover_names = run_names(config, config.recover)
        self.recover_handler = RecoverHandler(
            config.recover,
            self.ft_spec,
            experiment_name=recover_names.experiment_name,
            trial_name=recover_names.trial_name,
            fileroot=recover_names.fileroot,
        )
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
        loaded = self.recover_handler.load()
        if loaded is None:
            return
        info, folder = loaded
        done = info.last_step_info.global_step + 1
        from safetensors.torch import load_file

        weights = {}
        for shard in sorted((folder / "model").glob("*.safetensors")):
            weights.update(load_file(str(shard)))
        missing, _ = self.trainer.model.load_state_dict(weights, strict=False)
        tied = {k for k in missing if "lm_head" in k}
        if set(missing) - tied:
            raise ValueError(
                f"the recover checkpoint in {folder} does not fit actor.path's model (missing "
                f"{sorted(set(missing) - tied)[:3]}); use a new trial_name or "
                "recover.mode=disabled"
            )
        if hasattr(self.trainer.model, "tie_weights"):
            self.trainer.model.tie_weights()
        state = self.recover_handler.load_training_state(folder)
        if state is not None:
            self.learner.load_training_state(state)
        update = self.trainer.engine.update_weights(self.learner.state_dict_for_engine())
        update.result()
        self.trainer.engine.set_version(done)
        loop.start_at(done)
        loop.load_data_state(info.dataloader_info)
        if self.stats_logger is not None:
            self.stats_logger.load_state_dict(info.stats_logger_info)
        self.saver_ctl.load_state_dict(info.saver_info)
        self.eval_ctl.load_state_dict(info.evaluator_info)
        self.global_steps_done = done
        self.recovered_from = done
        print(
            f"recovered from {folder} after step {done}/{self.ft_spec.total_train_steps}"
            + ("" if state is not None else " (optimizer state not loaded)"),
            flush=True,
        )

    def _dump(self, info: StepInfo, loop: Any) -> None:
        self.recover_handler.dump(
            model=self.trainer.model,
            tokenizer=self.trainer.tokenizer,
            training_state=self.learner.training_state(),
            info=RecoverInfo(
                last_step_info=info,
                saver_info=self.saver_ctl.state_dict(),
                evaluator_info=self.eval_ctl.state_dict(),
                stats_logger_info={"last_commit_step": info.global_step},
                dataloader_info=loop.data_state(),
                checkpoint_info={},
            ),
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
            if self.stats_logger is not None:
                self.stats_logger.log_eval(global_step, eval_stats)
        if self.stats_logger is not None:
            self.stats_logger.commit(info.epoch, info.epoch_step, global_step, metrics)
        if self.recover_handler.due(info):
            self._dump(info, loop)

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
        if self.stats_logger is not None:
            self.stats_logger.close()


def _as_dict(config: Any) -> dict[str, Any]:
    import dataclasses

    try:
        return dataclasses.asdict(config)
    except TypeError:
        return {}
