# SPDX-License-Identifier: Apache-2.0
"""``PPOTrainer``: AReaL's trainer interface over the asynchronous loop, on one machine.

``PPOTrainer(config, train_dataset, valid_dataset)`` then ``trainer.train(workflow=...,
workflow_kwargs=...)``, as in AReaL's ``examples/math/gsm8k_rl.py``. The actor is
``config.actor.path`` (a local Hugging Face folder, or ``default`` / ``underconfident`` for the
embedded models); the rollout engine is a :class:`LocalEngine` serving a copy of it. With
``rollout.agent.mode: online`` there is no dataset or workflow: ``PPOTrainer(config).train()``
trains on the sessions outside agents run on its gateway (``online.py``).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from areal_runtime.api.experiment_config import AgentConfig, PPOConfig, report_ignored
from areal_runtime.api.io_struct import FinetuneSpec
from areal_runtime.consistency import ConsistencyReport
from areal_runtime.trainer.consistency import check_first_batch
from areal_runtime.trainer.loop import (
    AsyncRLLoop,
    StepResult,
    TrainingInputError,
    one_torch_thread,
)
from areal_runtime.trainer.online import OnlineGateway, online_dataset, online_steps

logger = logging.getLogger("areal_runtime.trainer")


def load_actor(path: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``actor.path``: an embedded model name or a local HF folder."""
    from areal_runtime.models.default_model import is_embedded_model, load_embedded_model

    if is_embedded_model(path):
        return load_embedded_model(path)
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise TrainingInputError(
            f"actor.path {path!r} is not a local Hugging Face model folder (no config.json) and "
            "there is no model hub here; use 'default' or 'underconfident' (the embedded models) "
            "or a folder saved with save_pretrained"
        )
    from transformers import AutoModelForCausalLM

    from areal_runtime.utils.hf_utils import load_hf_tokenizer

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
    return model, load_hf_tokenizer(str(folder))


def _announce(line: str) -> None:
    print(line, flush=True)


def total_steps_of(config: PPOConfig, dataset_len: int, total_epochs: int | None = None) -> int:
    """AReaL's count: epochs x (rows // batch size), capped by ``total_train_steps``."""
    epochs = config.total_train_epochs if total_epochs is None else total_epochs
    if epochs <= 0:
        raise TrainingInputError(f"total_train_epochs must be positive, got {epochs}")
    steps = FinetuneSpec(
        total_train_epochs=epochs,
        dataset_size=dataset_len,
        train_batch_size=config.train_dataset.batch_size,
    ).total_train_steps
    if config.total_train_steps is not None:
        if config.total_train_steps < 1:
            raise TrainingInputError(
                f"total_train_steps must be >= 1, got {config.total_train_steps}"
            )
        steps = min(steps, config.total_train_steps)
    return steps


class PPOTrainer:
    """Train ``config.actor`` with PPO/GRPO on trajectories from a workflow (AReaL's API)."""

    def __init__(
        self,
        config: PPOConfig,
        train_dataset: Any = None,
        valid_dataset: Any = None,
        *,
        engine: Any = None,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        import torch

        torch.set_num_threads(1)
        torch.manual_seed(config.seed)
        report_ignored(config)
        self.config = config
        self.agent = AgentConfig.of(config.rollout.agent)  # checked before any model loads
        self.online = self.agent.online
        if self.online and config.valid_dataset is not None:
            raise TrainingInputError(
                "valid_dataset must not be set with rollout.agent.mode=online: outside sessions "
                "have no validation set"
            )
        if train_dataset is None and not self.online:
            raise TrainingInputError(
                "PPOTrainer needs a train_dataset unless rollout.agent.mode=online"
            )
        self.train_dataset = online_dataset(config) if self.online else list(train_dataset)
        self.valid_dataset = list(valid_dataset) if valid_dataset is not None else None
        if config.rollout.consumer_batch_size != config.train_dataset.batch_size:
            logger.warning(
                "rollout.consumer_batch_size %d differs from train_dataset.batch_size %d: a "
                "step here trains on consumer_batch_size groups (sessions online), AReaL's on "
                "train_dataset.batch_size; set them equal to train as AReaL would",
                config.rollout.consumer_batch_size,
                config.train_dataset.batch_size,
            )
        if engine is None:
            from areal_runtime.engine.local import LocalEngine

            if model is None:
                model, loaded_tok = load_actor(config.actor.path or "default")
                tokenizer = tokenizer or loaded_tok
            engine = LocalEngine(copy.deepcopy(model), tokenizer, seed=config.seed)
        elif model is None:
            model = copy.deepcopy(engine.model)
        self.engine = engine
        self.model = model
        self.tokenizer = tokenizer if tokenizer is not None else getattr(engine, "tokenizer", None)
        self.history: list[StepResult] = []
        self.consistency: ConsistencyReport | None = None
        self.loop_stalls: list[Any] = []  # train(stall_threshold_s=...): the workflow's stalls
        self._closed = False

    def train(
        self,
        workflow: Any = None,
        eval_workflow: Any = None,
        workflow_kwargs: dict[str, Any] | None = None,
        eval_workflow_kwargs: dict[str, Any] | None = None,
        dynamic_filter_fn: Callable[[dict[str, Any]], bool] | str | None = None,
        total_epochs: int | None = None,
        *,
        allow_mismatch: bool = False,
        on_step: Callable[[StepResult], None] | None = None,
        check_hook: Callable[..., ConsistencyReport] = check_first_batch,
        console: bool = True,
        stall_threshold_s: float | None = None,
    ) -> list[StepResult]:
        """Run the training loop; returns one :class:`StepResult` per step of this run.

        As AReaL's trainer, after each update: statistics are printed (a compact row; ``console``)
        and written by the stats logger under ``stats_logger.fileroot``; the saver writes the
        actor every ``saver.freq_*``; ``eval_workflow`` runs over the valid dataset every
        ``evaluator.freq_*``; a recover checkpoint is dumped every ``recover.freq_*``, and with
        ``recover.mode`` on/auto a new run of the same trial resumes from the last one.
        ``on_step`` is called after each update (the engine already serves the new weights).
        With ``stall_threshold_s`` the loop-stall detector watches the run and
        ``self.loop_stalls`` holds what the workflow's own code blocked (not in AReaL).
        """
        from areal_runtime.trainer.learner import Learner
        from areal_runtime.trainer.session import TrainingSession

        gateway = None
        if self.online:
            if workflow is not None:
                raise TrainingInputError(
                    "rollout.agent.mode=online trains on outside sessions; call train() without "
                    "a workflow, or set rollout.agent.mode=inline to train this one"
                )
            gateway = OnlineGateway(self.agent, announce=_announce)
            workflow = gateway.workflow
            steps = online_steps(self.config, total_epochs)
        elif workflow is None:
            raise TrainingInputError(
                "train() needs workflow=...: a RolloutWorkflow or an agent (or "
                "rollout.agent.mode=online to train on outside sessions)"
            )
        else:
            steps = total_steps_of(self.config, len(self.train_dataset), total_epochs)
        one_torch_thread()
        learner = Learner(self.model, self.config, steps)
        session = TrainingSession(self, learner, steps, total_epochs, console=console)
        loop = AsyncRLLoop(
            config=self.config,
            engine=self.engine,
            learner=learner,
            workflow=workflow,
            dataset=self.train_dataset,
            workflow_kwargs=workflow_kwargs,
            tokenizer=self.tokenizer,
            should_accept_fn=dynamic_filter_fn,
            allow_mismatch=allow_mismatch,
            check_hook=check_hook,
            on_consistency=self._set_consistency,
            agent=self.agent,
            stall_threshold_s=stall_threshold_s,
        )
        if gateway is not None:
            loop.serve(gateway)
        self.last_eval = None
        ev = self.config.evaluator
        eval_due = ev.freq_epochs or ev.freq_steps or ev.freq_secs
        if eval_workflow is not None and eval_due and not self.valid_dataset:
            logger.warning(
                "evaluator.freq_* is set and an eval_workflow is given, but there is no "
                "valid_dataset: no evaluation will run; pass valid_dataset=... to PPOTrainer"
            )

        async def step_done(result: StepResult) -> None:
            self.history.append(result)
            await session.after_step(result, loop, eval_workflow, eval_workflow_kwargs)
            if on_step is not None:
                on_step(result)

        loop.on_step = step_done
        try:
            session.recover(loop)
            asyncio.run(loop.run(steps))
        finally:
            self.loop_stalls = loop.stalls
            session.close()
        saver = self.config.saver
        if saver.fileroot and (saver.freq_steps or saver.freq_epochs or saver.freq_secs):
            self.save(self.checkpoint_dir(), step=session.global_steps_done)
        return self.history

    def _set_consistency(self, report: ConsistencyReport) -> None:
        self.consistency = report

    async def evaluate_async(
        self, workflow: Any, workflow_kwargs: dict[str, Any] | None = None
    ) -> Any:
        """Run ``workflow`` over the valid dataset with ``is_eval``; returns the RolloutReport."""
        from areal_runtime.infra.workflow_executor import RolloutConfig, run_rollout

        result = await run_rollout(
            workflow,
            self.valid_dataset,
            self.engine,
            workflow_kwargs=workflow_kwargs,
            tokenizer=self.tokenizer,
            config=RolloutConfig(
                is_eval=True,
                group_size=max(1, (self.config.eval_gconfig or self.config.gconfig).n_samples),
                stall_threshold_s=None,
                **self.agent.executor_settings(),
            ),
            progress=False,
        )
        return result.report

    def evaluate(self, workflow: Any, workflow_kwargs: dict[str, Any] | None = None) -> Any:
        """Synchronous :meth:`evaluate_async`, outside training."""
        return asyncio.run(self.evaluate_async(workflow, workflow_kwargs))

    def checkpoint_dir(self) -> Path:
        s = self.config.saver
        return (
            Path(s.fileroot)
            / "checkpoints"
            / (s.experiment_name or self.config.experiment_name or "experiment")
            / (s.trial_name or self.config.trial_name or "trial")
            / "default"
        )

    def save(self, path: str | Path, **state: Any) -> Path:
        """Write the actor as a Hugging Face folder (atomically; see ``checkpoint.py``)."""
        from areal_runtime.trainer.checkpoint import save_checkpoint

        return save_checkpoint(self.model, self.tokenizer, path, **state)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            close = getattr(self.engine, "close", None)
            if close is not None:
                close()

    def _requires_proxy_workflow(self, workflow: Any) -> bool:
        """AReaL's check: whether ``workflow`` is an agent that needs the proxy (anything but a
        RolloutWorkflow). The executor wraps such workflows in the in-process proxy."""
        from areal_runtime.infra.workflow_resolution import requires_proxy

        return requires_proxy(workflow)

    def __enter__(self) -> PPOTrainer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
