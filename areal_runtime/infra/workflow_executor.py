# SPDX-License-Identifier: Apache-2.0
"""Run a workflow over a dataset the way AReaL does: every episode a task on one event loop.

Semantics kept from AReaL: ``WorkflowContext(is_eval, task_id)`` is set per episode; ``group_size``
copies run under ``gather`` and one failure rejects the group; ``None`` results are dropped from a
group and an all-``None`` group is rejected; ``should_accept_fn`` filters. Fixed: rejections are
counted and reported with their traceback (AReaL only logs them), an empty agent trajectory is
rejected (AReaL accepts ``{}``), and a loop-stall detector names blocking calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api import reward_api
from areal_runtime.errors import EpisodeRejected
from areal_runtime.infra.episode_logs import LOGGED, episode_log_notes, last_reply_note
from areal_runtime.infra.rollout_report import EpisodeRecord, RolloutReport
from areal_runtime.infra.stall_detector import (
    LoopStallDetector,
    StallReport,
    start_pool_threads,
)
from areal_runtime.infra.workflow_resolution import resolve_workflow
from areal_runtime.utils.dynamic_import import import_from_string
from areal_runtime.utils.files import iter_jsonl
from areal_runtime.workflow_context import WorkflowContext


@dataclass(frozen=True)
class RolloutConfig:
    """How episodes run (AReaL keeps the same knobs in its ``InferenceEngineConfig``).

    ``stall_threshold_s=None`` turns the loop-stall detector off; ``should_accept_fn`` may be an
    import string; ``agent_mode="subproc"`` runs agents in worker processes (AReaL's subproc
    mode) instead of on the loop.
    """

    concurrency: int = 64
    group_size: int = 1
    should_accept_fn: Callable[[dict], bool] | str | None = None
    is_eval: bool = False
    validate: bool = False
    stall_threshold_s: float | None = 0.05
    agent_mode: str = "inline"
    agent_options: dict[str, Any] | None = None
    """``rollout.agent``'s export_style, turn_discount, chat_template_type ... for agents."""

    def __post_init__(self) -> None:
        if self.agent_mode not in ("inline", "subproc"):
            raise ValueError(f"agent_mode must be 'inline' or 'subproc', got {self.agent_mode!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {self.group_size}")

    def with_settings(self, **settings: Any) -> RolloutConfig:
        """A copy with ``settings`` applied; an unknown name is a TypeError naming the fields."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise TypeError(f"unknown rollout setting(s) {unknown}; valid: {sorted(names)}")
        return dataclasses.replace(self, **settings) if settings else self


@dataclass
class RolloutResult:
    """The accepted trajectories merged into one padded batch, plus per-episode records."""

    batch: dict[str, Any]
    report: RolloutReport
    episodes: list[EpisodeRecord]


def iter_dataset(dataset: Any) -> Iterator[dict[str, Any]]:
    """Rows from a list/iterable of dicts or a JSONL path; errors name the bad line."""
    if isinstance(dataset, str | Path):
        path = Path(dataset)
        if not path.is_file():
            raise FileNotFoundError(f"dataset {path} does not exist (expected a JSONL file)")

        return (row for _, row in iter_jsonl(path))
    if isinstance(dataset, dict) or not isinstance(dataset, Iterable):
        raise TypeError(
            f"dataset must be a list of dicts, an iterable or a JSONL path, "
            f"got {type(dataset).__name__}"
        )
    return iter(dataset)


def trajectory_of(result: Any) -> dict[str, Any] | None:
    """A tensor dict from a workflow result; interaction dicts are converted.

    Raises :class:`EpisodeRejected` for a result that is not a dict (``invalid``) or is ``{}``
    (``empty``); ``None`` passes through (the caller decides what a skipped episode means).
    """
    from areal_runtime.utils.data import concat_padded_tensors

    if result is None:
        return None
    if not isinstance(result, dict):
        raise EpisodeRejected(
            "invalid", f"arun_episode returned {type(result).__name__}; return a dict or None"
        )
    if not result:
        raise EpisodeRejected("empty", "the workflow returned an empty trajectory ({})")
    values = list(result.values())
    if all(hasattr(v, "to_tensor_dict") for v in values):
        return concat_padded_tensors([v.to_tensor_dict() for v in values])
    return result


def _reward_of(traj: dict[str, Any]) -> float | None:
    rewards = traj.get("rewards")
    if rewards is None:
        return None
    values = rewards.tolist() if hasattr(rewards, "tolist") else [rewards]
    values = values if isinstance(values, list) else [values]
    return sum(float(v) for v in values) / len(values) if values else None


def _rewards_of(trajs: list[dict[str, Any]]) -> list[float]:
    """Each episode's reward: the mean of its rows' (an agent's turns carry the same one)."""
    return [r for r in map(_reward_of, trajs) if r is not None]


def _generated_tokens(traj: dict[str, Any]) -> tuple[int, int]:
    mask, ids = traj.get("loss_mask"), traj.get("input_ids")
    generated = int(mask.sum()) if mask is not None and hasattr(mask, "sum") else 0
    length = int(ids.shape[-1]) if ids is not None and hasattr(ids, "shape") else 0
    return generated, length


class WorkflowExecutor:
    """Runs episodes with a concurrency limit on the current event loop."""

    def __init__(
        self,
        workflow: Any,
        engine: Any,
        *,
        workflow_kwargs: dict[str, Any] | None = None,
        config: RolloutConfig | None = None,
        tokenizer: Any = None,
        **settings: Any,
    ) -> None:
        self.config = (config or RolloutConfig()).with_settings(**settings)
        self.engine = engine
        self.tokenizer = tokenizer
        self.proxy: Any = None
        self.workflow = resolve_workflow(
            workflow, workflow_kwargs, make_agent_workflow=self._agent_workflow
        )
        accept = self.config.should_accept_fn
        self.should_accept_fn = import_from_string(accept) if isinstance(accept, str) else accept
        self._running: dict[asyncio.Task, int] = {}

    def _agent_workflow(self, agent: Any) -> Any:
        from areal_runtime.experimental.openai.proxy import proxy_workflow

        workflow = proxy_workflow(
            agent,
            self.engine,
            self.tokenizer,
            mode=self.config.agent_mode,
            **(self.config.agent_options or {}),
        )
        self.proxy = workflow.proxy
        return workflow

    def start_episode(self, index: int, data: dict[str, Any]) -> asyncio.Task:
        """``run_episode`` as a task the stall detector can name (the trainer's loop)."""
        return self._task_of_episode(index, self.run_episode(index, data))

    def _task_of_episode(self, index: int, coro: Any) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._running[task] = index
        task.add_done_callback(lambda done: self._running.pop(done, None))
        return task

    def stall_detector(self, threshold_s: float | None) -> LoopStallDetector | None:
        """A detector that names this executor's episodes and knows the proxy it serves (None
        when ``threshold_s`` turns it off); ``run`` and the trainer's loop watch with it."""
        if not threshold_s:
            return None
        return LoopStallDetector(threshold_s, describe_task=self.describe_task, serves=self.serves)

    def describe_task(self, task: asyncio.Task) -> str | None:
        index = self._running.get(task)
        return None if index is None else f"episode {index} ({type(self.workflow).__name__})"

    def serves(self) -> set[tuple[str, int]]:
        """The loopback address the proxy serves on this loop (a sync call to it deadlocks)."""
        port = getattr(self.proxy, "port", None)
        return {(str(self.proxy.host), int(port))} if port else set()

    async def run(
        self, dataset: Any, *, progress: Callable[[int], None] | None = None
    ) -> RolloutResult:
        rows = enumerate(iter_dataset(dataset))
        records: list[EpisodeRecord] = []
        timeouts_before = reward_api.GLOBAL_STATS.timeouts
        stalls: list[StallReport] = []
        start = time.perf_counter()

        async def worker() -> None:
            task = asyncio.current_task()
            assert task is not None
            for index, data in rows:
                self._running[task] = index
                records.append(await self.run_episode(index, data))
                self._running.pop(task, None)
                if progress is not None:
                    progress(1)

        detector = self.stall_detector(self.config.stall_threshold_s)
        async with contextlib.nullcontext() if self.proxy is None else self.proxy:
            if detector is not None:
                await start_pool_threads(min(self.config.concurrency, 8))
                detector.start()
            try:
                with episode_log_notes():
                    await asyncio.gather(*(worker() for _ in range(self.config.concurrency)))
            finally:
                if detector is not None:
                    detector.stop()
                    stalls = detector.stalls
        records.sort(key=lambda r: r.index)
        report = RolloutReport.from_records(
            records,
            time.perf_counter() - start,
            reward_api.GLOBAL_STATS.timeouts - timeouts_before,
            stalls,
        )
        return RolloutResult(batch=self._batch(records), report=report, episodes=records)

    @staticmethod
    def _batch(records: list[EpisodeRecord]) -> dict[str, Any]:
        from areal_runtime.utils.data import concat_padded_tensors

        accepted = [r.trajectory for r in records if r.accepted and r.trajectory is not None]
        return concat_padded_tensors(accepted) if accepted else {}

    async def run_episode(self, index: int, data: dict[str, Any]) -> EpisodeRecord:
        """One episode (a group of ``group_size``) of ``data`` as task ``index``, never raising:
        a failure is a rejected record with its reason. The trainer's loop schedules these one
        by one; the agent's proxy, if any, must be entered around them (``run`` does)."""
        workflow_context.set(WorkflowContext(is_eval=self.config.is_eval, task_id=index))
        start = time.perf_counter()
        record = EpisodeRecord(index=index, task_id=index, accepted=False, latency_s=0.0)
        with workflow_context.collecting_notes() as notes:
            try:
                traj, rewards = await self._collect(index, data)
                self._check(traj)
            except EpisodeRejected as rejected:
                record.reason, record.error = rejected.reason, str(rejected)
                if rejected.reason == "none" and notes:  # e.g. the agent never called the model
                    record.error += ": " + "; ".join(notes)
            except Exception:
                record.reason, record.error = "exception", traceback.format_exc()
            else:
                record.accepted, record.trajectory = True, traj
                record.episode_rewards = rewards
                record.reward = sum(rewards) / len(rewards) if rewards else None
                record.generated_tokens, record.sequence_length = _generated_tokens(traj)
        record.latency_s = time.perf_counter() - start
        if any(LOGGED in n for n in notes):  # a library logged an error: show what was sampled
            reply = last_reply_note(record.trajectory, self.tokenizer)
            notes += [reply] if reply else []
        record.notes = notes
        return record

    async def _collect(
        self, index: int, data: dict[str, Any]
    ) -> tuple[dict[str, Any], list[float]]:
        """The episode's (or group's) trajectory and each member's reward."""
        from areal_runtime.utils.data import concat_padded_tensors

        if self.config.group_size == 1:
            traj = trajectory_of(await self.workflow.arun_episode(self.engine, data))
            if traj is None:
                raise EpisodeRejected("none", "the workflow returned None")
            return traj, _rewards_of([traj])
        members = [
            self._task_of_episode(
                index, self.workflow.arun_episode(self.engine, copy.deepcopy(data))
            )
            for _ in range(self.config.group_size)
        ]
        results = await asyncio.gather(*members)
        trajs = [t for t in (trajectory_of(r) for r in results) if t is not None]
        if not trajs:
            raise EpisodeRejected(
                "none", f"all {self.config.group_size} members of the group returned None"
            )
        return concat_padded_tensors(trajs), _rewards_of(trajs)

    def _check(self, traj: dict[str, Any]) -> None:
        if self.config.validate:
            from areal_runtime.utils.data import trajectory_problems

            problems = trajectory_problems(traj)
            if problems:
                raise EpisodeRejected("invalid", "; ".join(problems))
        if self.should_accept_fn is not None and not self.should_accept_fn(traj):
            raise EpisodeRejected("should_accept", "should_accept_fn returned False")


async def run_rollout(
    workflow: Any,
    dataset: Any,
    engine: Any,
    *,
    workflow_kwargs: dict[str, Any] | None = None,
    config: RolloutConfig | None = None,
    tokenizer: Any = None,
    progress: bool | None = None,
    **settings: Any,
) -> RolloutResult:
    """Run ``workflow`` over ``dataset`` on ``engine``; see :class:`WorkflowExecutor`.

    ``settings`` are :class:`RolloutConfig` fields (``concurrency=8``) applied over ``config``.
    ``progress=None`` shows a progress bar only when stderr is a terminal.
    """
    executor = WorkflowExecutor(
        workflow,
        engine,
        workflow_kwargs=workflow_kwargs,
        config=config,
        tokenizer=tokenizer,
        **settings,
    )
    show = sys.stderr.isatty() if progress is None else progress
    if not show:
        return await executor.run(dataset)
    from rich.progress import Progress

    total = len(dataset) if hasattr(dataset, "__len__") else None
    with Progress(transient=True) as bar:
        task = bar.add_task("rollout", total=total)
        return await executor.run(dataset, progress=lambda n: bar.advance(task, n))


def rollout(workflow: Any, dataset: Any, engine: Any, **kwargs: Any) -> RolloutResult:
    """Synchronous :func:`run_rollout`, for scripts and notebooks without a running loop."""
    return asyncio.run(run_rollout(workflow, dataset, engine, **kwargs))
