# SPDX-License-Identifier: Apache-2.0
"""The asynchronous RL loop: rollouts keep running on the engine while the trainer updates.

One event loop (this thread) runs episodes through :class:`WorkflowExecutor`; the engine's
worker thread generates; a trainer thread runs :meth:`Learner.step`. After each update the new
weights go to the engine between two decode steps (``update_weights``), so episodes in flight
continue with the new policy and every token carries the version that produced it.

Staleness follows AReaL's ``max_head_offpolicyness`` through AReaL's ``StalenessManager``
(``areal_runtime.infra.staleness_manager``): a new group may start only while it reports
capacity (``accepted + running < (max_head_offpolicyness + version + 1) * consumer_batch_size``,
and at most ``max_concurrent_rollouts`` running), and a group whose oldest trained token is
older than ``version - max_head_offpolicyness`` when its batch is assembled is dropped
(``stale``) instead of trained on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.api.experiment_config import AgentConfig, PPOConfig
from areal_runtime.consistency import ConsistencyReport
from areal_runtime.engine.recording import RecordingEngine
from areal_runtime.infra.rollout_report import EpisodeRecord
from areal_runtime.infra.staleness_manager import StalenessManager
from areal_runtime.infra.stall_report import StallReport
from areal_runtime.infra.workflow_executor import RolloutConfig, WorkflowExecutor
from areal_runtime.trainer.consistency import check_first_batch
from areal_runtime.trainer.data_cursor import DataCursor
from areal_runtime.trainer.errors import TrainingInputError
from areal_runtime.trainer.learner import REQUIRED_KEYS, Learner


class ConsistencyError(RuntimeError):
    """The first batch disagrees with what the engine sampled (see ``report``)."""

    def __init__(self, report: ConsistencyReport) -> None:
        super().__init__(
            report.format()
            + "\nrefusing to train on these trajectories; fix the workflow, or pass "
            "--allow-mismatch (allow_mismatch=True) to train anyway"
        )
        self.report = report


@dataclass
class _Group:
    index: int
    record: EpisodeRecord
    submitted_version: int
    row: int = -1


def episode_rewards(records: list[EpisodeRecord]) -> tuple[list[float], int]:
    """Each trained episode's reward, and the number of trajectory rows they trained.

    The step's reward is the mean over episodes, as ``run`` reports it: an agent's episode
    gives a row a turn, and over rows one that made a tool call (two rows) weighed twice one
    that answered at once.
    """
    rewards = [r for record in records for r in record.episode_rewards]
    rows = sum(record.trajectory["rewards"].numel() for record in records)  # type: ignore[index]
    return rewards, rows


@dataclass
class StepResult:
    """One training step: its metrics and the groups it trained on."""

    metrics: dict[str, Any]
    records: list[EpisodeRecord] = field(default_factory=list)


ConsistencyHook = Callable[[list[tuple[int, dict[str, Any]]], RecordingEngine], ConsistencyReport]


class AsyncRLLoop:
    """Runs ``total_steps`` updates of ``learner`` on trajectories from ``workflow``."""

    def __init__(
        self,
        *,
        config: PPOConfig,
        engine: Any,
        learner: Learner,
        workflow: Any,
        dataset: list[dict[str, Any]],
        workflow_kwargs: dict[str, Any] | None = None,
        tokenizer: Any = None,
        should_accept_fn: Any = None,
        allow_mismatch: bool = False,
        check_hook: ConsistencyHook = check_first_batch,
        on_step: Callable[[StepResult], Any] | None = None,
        on_consistency: Callable[[ConsistencyReport], None] | None = None,
        agent: Any = None,
        stall_threshold_s: float | None = None,
    ) -> None:
        agent_cfg = AgentConfig.of(agent)  # rollout.agent, checked before any work
        if not dataset:
            raise TrainingInputError("the training dataset is empty; give it at least one row")
        if not callable(getattr(engine, "update_weights", None)):
            raise TrainingInputError(
                f"{type(engine).__name__} cannot load new weights (no update_weights); train "
                "with a LocalEngine (--engine local or hf:PATH)"
            )
        check_reward_fields(workflow_kwargs, dataset)
        self.config = config
        self.engine = RecordingEngine(engine)
        self.learner = learner
        self.dataset = list(dataset)
        self.batch_size = config.rollout.consumer_batch_size
        self.group_size = max(1, config.gconfig.n_samples)
        self.max_staleness = config.rollout.max_head_offpolicyness
        limit = config.rollout.max_concurrent_rollouts
        self.max_running = limit if limit else self.batch_size * (self.max_staleness + 1)
        self.executor = WorkflowExecutor(
            workflow,
            self.engine,
            workflow_kwargs=workflow_kwargs,
            config=RolloutConfig(
                group_size=self.group_size,
                should_accept_fn=should_accept_fn,
                validate=config.rollout.check_trajectory_format,
                stall_threshold_s=None,
                **agent_cfg.executor_settings(),
            ),
            tokenizer=tokenizer,
        )
        # The trainer thread: one torch thread, beside the engine's one.
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="areal-trainer", initializer=one_torch_thread
        )
        self.allow_mismatch = allow_mismatch
        self.check_hook = check_hook
        self.on_step = on_step
        self.on_consistency = on_consistency
        self.version = 0
        self.staleness = StalenessManager(
            version_provider=self,
            max_concurrent_rollouts=self.max_running,
            consumer_batch_size=self.batch_size,
            max_staleness=self.max_staleness,
        )
        self.rejected: Counter[str] = Counter()
        self.rejected_why: Counter[str] = Counter()  # reason and the error's last line
        self.rejection_examples: list[EpisodeRecord] = []
        self.cursor = DataCursor(
            len(self.dataset), shuffle=config.train_dataset.shuffle, seed=config.seed
        )
        self._next_index = 0
        self._rollout_tokens = 0
        self._rollout_seconds = 0.0
        self._accepted_since_step = 0
        self.consistency: ConsistencyReport | None = None
        # The loop-stall detector, off unless a threshold is given: what the workflow's own
        # code blocked while training (the train command reports it).
        self.stall_threshold_s = stall_threshold_s
        self.stalls: list[StallReport] = []
        self._only_what_steps_train = True  # episodes started: no more than the steps left train

    # -- data ------------------------------------------------------------------------------
    def data_state(self) -> dict[str, Any]:
        return self.cursor.state_dict()

    def load_data_state(self, state: dict[str, Any]) -> None:
        self.cursor.load_state_dict(state)

    def start_at(self, version: int) -> None:
        """Continue a recovered run: the engine and trainer are at ``version``."""
        self.version = version
        self.staleness.on_version_recovered(version)

    def serve(self, gateway: Any) -> None:
        """Serve ``gateway`` (online mode) around the run, generating on this loop's recording
        engine, so that the first batch's check sees what outside sessions sampled."""
        gateway.attach(self.engine, self.executor.tokenizer)
        self.executor.proxy = gateway
        # An episode here is capacity granted to an outside session: granted as AReaL grants
        # it, to the end, or a client's last session would get a 429 that AReaL never gives.
        self._only_what_steps_train = False

    # -- staleness control -------------------------------------------------------------------
    def get_version(self) -> int:
        """The trainer's version, for the staleness manager (its ``VersionProvider``)."""
        return self.version

    @property
    def accepted_total(self) -> int:
        """Groups accepted so far (less those dropped as stale)."""
        return self.staleness.get_stats().accepted

    # -- the loop ----------------------------------------------------------------------------
    async def run(self, total_steps: int) -> list[StepResult]:
        """Train until ``total_steps`` (counted from version 0) updates are done.

        An agent's proxy (or the online gateway) serves for the whole run: episodes in flight
        talk to it until the last update.
        """
        if total_steps < 1:
            raise TrainingInputError(f"the number of steps must be >= 1, got {total_steps}")
        proxy = self.executor.proxy
        detector = self.executor.stall_detector(self.stall_threshold_s)
        async with contextlib.nullcontext() if proxy is None else proxy:
            try:
                with detector or contextlib.nullcontext():
                    return await self._train(total_steps - self.version)  # recovered: continues
            finally:
                if detector is not None:
                    self.stalls = [s for s in detector.stalls if s.is_workflows]

    async def _train(self, total_steps: int) -> list[StepResult]:
        """Keep rollouts running within the staleness window; train on each full batch in the
        trainer thread while they go on; load the new weights into the engine after each step."""
        loop = asyncio.get_running_loop()
        running: dict[asyncio.Future, tuple[int, int]] = {}  # episode -> (index, version)
        ready: deque[_Group] = deque()
        results: list[StepResult] = []
        train_future: asyncio.Future | None = None
        training: list[_Group] = []
        step_started = time.perf_counter()
        try:
            while len(results) < total_steps:
                # no more groups than the steps still to start can train: the last steps' extra
                # episodes were cancelled unused (a sixth of a 6-step run's rollouts)
                steps_to_start = total_steps - len(results) - (train_future is not None)
                needed = steps_to_start * self.batch_size - len(ready) - len(running)
                if not self._only_what_steps_train:
                    needed = max(needed, self.staleness.get_capacity())
                self._submit_within_capacity(running, needed)
                if train_future is None and len(ready) >= self.batch_size:
                    training = self._take_batch(ready)
                    if training:
                        self._rollout_seconds = time.perf_counter() - step_started
                        if not results:
                            self._first_batch_checks(training)
                        groups = [g.record.trajectory for g in training]
                        train_future = loop.run_in_executor(
                            self.pool, self.learner.step, groups, self.version
                        )
                    continue  # or stale groups were dropped: start their replacements first
                waiting = set(running) if train_future is None else {*running, train_future}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for task in done - {train_future}:
                    self._collect(task, *running.pop(task), ready)
                if train_future in done:
                    metrics, train_future = train_future.result(), None  # type: ignore[union-attr]
                    result = await self._finish_step(metrics, training, step_started)
                    step_started = time.perf_counter()
                    results.append(result)
                    if self.on_step is not None:
                        after = self.on_step(result)
                        if inspect.isawaitable(after):
                            await after  # evaluation: rollouts in flight keep going meanwhile
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            if train_future is not None:
                await asyncio.gather(train_future, return_exceptions=True)
            self.pool.shutdown(wait=False)  # its one job was awaited above
        return results

    def _submit_within_capacity(
        self, running: dict[asyncio.Future, tuple[int, int]], needed: int
    ) -> None:
        """Start up to ``needed`` next dataset rows' episodes while the staleness manager has
        room."""
        for _ in range(max(needed, 0)):
            if self.staleness.get_capacity() <= 0:
                return
            index = self._next_index
            self._next_index += 1
            row = self.cursor.draw(index)
            self.staleness.on_rollout_enqueued()
            task = self.executor.start_episode(index, self.dataset[row])
            self.staleness.on_rollout_submitted()
            running[task] = (index, self.version)

    def _collect(
        self, task: asyncio.Future, index: int, submitted: int, ready: deque[_Group]
    ) -> None:
        """A finished episode: ready for a batch if accepted, else counted as a rejection."""
        record = task.result()
        if record.accepted and record.trajectory is not None:
            self.staleness.on_rollout_accepted()
            self._accepted_since_step += 1
            self._rollout_tokens += record.generated_tokens
            ready.append(_Group(index, record, submitted, self.cursor.row_of(index)))
        else:
            self.staleness.on_rollout_rejected()
            self.cursor.done(index)
            self._reject(record)

    async def _finish_step(
        self, metrics: dict[str, Any], batch: list[_Group], step_started: float
    ) -> StepResult:
        """After an update: its rows are consumed, the engine gets the weights, version + 1."""
        for group in batch:
            self.cursor.done(group.index)
        mark = time.perf_counter()
        update = self.engine.update_weights(self.learner.state_dict_for_engine())
        new_version = await asyncio.wrap_future(update)
        metrics["timeperf/update_weights"] = time.perf_counter() - mark
        self.version += 1
        if new_version != self.version:
            self.engine.set_version(self.version)
        return self._step_result(metrics, batch, time.perf_counter() - step_started)

    def _reject(self, record: EpisodeRecord) -> None:
        self.rejected[record.reason or "unknown"] += 1
        self.rejected_why[rejection_cause(record)] += 1
        if len(self.rejection_examples) < 3:
            self.rejection_examples.append(record)
        total = sum(self.rejected.values())
        if self.accepted_total == 0 and total >= max(2 * self.batch_size, 4):
            raise TrainingInputError(self._all_rejected_message(total))

    def _all_rejected_message(self, total: int) -> str:
        reasons = ", ".join(f"{n} {r}" for r, n in self.rejected.most_common())
        example = self.rejection_examples[0]
        tail = (example.error or "").strip().splitlines()[-1:] or [""]
        return (
            f"every episode so far was rejected ({total}: {reasons}), so there is nothing to "
            f"train on. First error: {tail[0]}. Run the workflow with `areal-devkit run` on the "
            "same data and --kwargs to see each rejection in full"
        )

    def _take_batch(self, ready: deque[_Group]) -> list[_Group]:
        """The next ``batch_size`` groups, dropping any that are staler than allowed."""
        batch: list[_Group] = []
        while ready and len(batch) < self.batch_size:
            group = ready.popleft()
            oldest = _oldest_version(group.record.trajectory)
            if oldest is not None and self.version - oldest > self.max_staleness:
                self.cursor.done(group.index)
                self.rejected["stale"] += 1
                self.staleness.on_accepted_rollout_dropped()  # frees its slot
                continue
            batch.append(group)
        if len(batch) < self.batch_size:
            ready.extendleft(reversed(batch))
            return []
        return batch

    def _first_batch_checks(self, batch: list[_Group]) -> None:
        first = batch[0].record.trajectory or {}
        missing = [k for k in REQUIRED_KEYS if k not in first]
        if missing:
            raise TrainingInputError(
                f"the workflow's trajectories have no {missing} "
                f"(keys: {sorted(first)}); a trainable trajectory needs {list(REQUIRED_KEYS)}: "
                "put resp.output_logprobs in 'logprobs' (0.0 on prompt tokens), the loss mask in "
                "'loss_mask' and the reward in 'rewards'"
            )
        report = self.check_hook([(g.index, g.record.trajectory) for g in batch], self.engine)
        self.consistency = report
        self.engine.stop_recording()  # only the first batch is checked
        if self.on_consistency is not None:
            self.on_consistency(report)
        if not report.ok and not self.allow_mismatch:
            raise ConsistencyError(report)

    def _step_result(
        self, metrics: dict[str, Any], batch: list[_Group], seconds: float
    ) -> StepResult:
        import statistics

        rewards, rows = episode_rewards([g.record for g in batch])
        # GRPO learns from differences within a group: a group whose samples all got the same
        # reward has zero advantages, and a step with no such group learns nothing.
        varied = sum(
            len(set(g.record.trajectory["rewards"].reshape(-1).tolist())) > 1  # type: ignore[index]
            for g in batch
        )
        rejected = dict(self.rejected)
        self.rejected.clear()
        rejected_why = dict(self.rejected_why)
        self.rejected_why.clear()
        tokens, self._rollout_tokens = self._rollout_tokens, 0
        accepted, self._accepted_since_step = self._accepted_since_step, 0
        from areal_runtime.utils import stats_tracker

        workflow_stats = stats_tracker.get("rollout").export()  # rollout/reward, ... this step
        out = {
            "step": self.version,
            "version": self.version,
            "reward_mean": statistics.fmean(rewards) if rewards else 0.0,
            "reward_std": statistics.pstdev(rewards) if len(rewards) > 1 else 0.0,
            "accepted": len(batch),
            "rejected": sum(rejected.values()),
            "rejected_by_reason": rejected,
            "rejected_why": rejected_why,
            "samples": rows,
            "group_size": self.group_size,  # samples of one prompt, accepted or rejected whole
            "groups_with_reward_variance": varied,
            **metrics,
            "rollout_tokens": tokens,
            "rollout_tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
            "step_seconds": seconds,
            **workflow_stats,
            "rollout/accepted": float(accepted),
            "rollout/rejected": float(sum(rejected.values())),
            "timeperf/rollout": self._rollout_seconds,
        }
        return StepResult(metrics=out, records=[g.record for g in batch])


def check_reward_fields(workflow_kwargs: dict[str, Any] | None, dataset: list[dict]) -> None:
    """Refuse a dataset whose rows lack a field the reward function requires.

    AReaL calls ``reward_fn(prompt, completions, prompt_ids, completion_ids, **row)``; a missing
    required keyword would reject every episode with a TypeError deep in a worker process.
    """
    import inspect

    reward = (workflow_kwargs or {}).get("reward_fn")
    if isinstance(reward, str):
        from areal_runtime.utils.dynamic_import import import_from_string

        try:
            reward = import_from_string(reward)
        except Exception:
            return  # the workflow will report it with its own error
    if not callable(reward):
        return
    try:
        params = list(inspect.signature(reward).parameters.values())
    except (TypeError, ValueError):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][4:]
    needed = [
        p.name
        for p in positional + [p for p in params if p.kind == p.KEYWORD_ONLY]
        if p.default is inspect.Parameter.empty
    ]
    for number, row in enumerate(dataset[:100]):
        missing = [n for n in needed if n not in row]
        if missing:
            name = getattr(reward, "__name__", repr(reward))
            raise TrainingInputError(
                f"dataset row {number} has no {missing} field, which the reward function "
                f"{name}() needs (row keys: {sorted(row)}); add the field to every row or pass "
                "a reward_fn that reads the fields your data has"
            )


def rejection_cause(record: EpisodeRecord) -> str:
    """``reason`` plus the last line of the error, e.g. ``exception: ValueError: bad row``."""
    last = (record.error or "").strip().splitlines()[-1:]
    return (
        f"{record.reason or 'unknown'}: {last[0].strip()}" if last else record.reason or "unknown"
    )


def one_torch_thread() -> None:
    """Limit torch to one thread in this thread (the trainer's, beside the engine's one)."""
    import torch

    torch.set_num_threads(1)


def _oldest_version(traj: dict[str, Any] | None) -> int | None:
    if not traj or "versions" not in traj or "loss_mask" not in traj:
        return None
    versions = traj["versions"][traj["loss_mask"].bool()]
    versions = versions[versions >= 0]
    return int(versions.min()) if versions.numel() else None
