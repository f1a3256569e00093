# SPDX-License-Identifier: Apache-2.0
"""Run a workflow over rows on a recording engine and check every trajectory it returns.

This is what ``areal-devkit check`` and the ``consistency_check`` fixture call: the bugs it
looks for (re-tokenized completions, shifted or missing logprobs, prompt tokens trained,
histories that are not prefixes) otherwise show up only as a diverging GPU training run.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.consistency.check import check_trajectory
from areal_runtime.consistency.logprobs import DEFAULT_ATOL
from areal_runtime.consistency.problem import EPISODE, Problem
from areal_runtime.engine.recording import RecordingEngine
from areal_runtime.infra.stall_report import StallReport
from areal_runtime.infra.traceback_summary import TracebackSummary, summarize_traceback
from areal_runtime.infra.workflow_executor import run_rollout

# Executor reasons that mean the workflow chose to drop the episode, not that it broke.
_SKIP_REASONS = {"none", "should_accept"}


@dataclass
class EpisodeCheck:
    """One episode: its problems, or why it was not checked (``skipped``)."""

    index: int
    problems: list[Problem] = field(default_factory=list)
    skipped: str | None = None

    @property
    def passed(self) -> bool:
        return self.skipped is None and not self.problems


@dataclass
class ConsistencyReport:
    """Per-episode results, whether logprobs were also checked against the model, and the
    times the workflow's own code blocked the event loop (when the detector was on)."""

    episodes: list[EpisodeCheck]
    model_parity: str | None
    note: str | None = None
    wall_s: float = 0.0
    stalls: list[StallReport] = field(default_factory=list)
    stall_threshold_s: float | None = None

    @property
    def problems(self) -> list[Problem]:
        return [p for e in self.episodes for p in e.problems]

    @property
    def checked(self) -> int:
        return sum(e.skipped is None for e in self.episodes)

    @property
    def ok(self) -> bool:
        """Every checked episode passed, at least one was checked, and the workflow never
        blocked the event loop (every episode of a training run waits while it does)."""
        return self.checked > 0 and not self.problems and not self.stalls

    def checks_failed(self) -> set[str]:
        return {p.check for p in self.problems}

    def summary(self) -> str:
        failed = sum(bool(e.problems) for e in self.episodes)
        skipped = len(self.episodes) - self.checked
        counts = Counter(p.check for p in self.problems)
        by_check = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        verdict = "PASS" if self.ok else "FAIL"
        line = (
            f"{verdict}: {len(self.episodes)} episodes, {self.checked - failed} passed, "
            f"{failed} failed, {skipped} skipped; {len(self.problems)} problems"
        )
        if by_check:
            line += f" ({by_check})"
        if self.stalls:
            line += f"; the event loop blocked {len(self.stalls)} time(s)"
        return line + f"  [{self.wall_s:.1f} s]"

    def format(self, *, max_per_episode: int = 5) -> str:
        """Failing episodes with their problems, then the settings and the summary line."""
        lines = []
        shown: set[str] = set()
        groups = _same_failures(self.episodes)
        for episode in self.episodes:
            if not episode.problems:
                continue
            group = groups.get(episode.index)
            if group is not None:  # every episode that failed this way, once
                key = _failure_key(episode.problems[0])
                if key not in shown:
                    shown.add(key)
                    lines.append(f"episodes {_ranges(group)} ({len(group)}): the same problem")
                    text = episode.problems[0].format(label=f"episodes {_ranges(group)}")
                    lines.extend("  " + line for line in text.splitlines())
                continue
            lines.append(f"episode {episode.index}: {len(episode.problems)} problem(s)")
            for problem in episode.problems[:max_per_episode]:
                lines.extend("  " + line for line in problem.format().splitlines())
            hidden = len(episode.problems) - max_per_episode
            if hidden > 0:
                lines.append(f"  ... and {hidden} more")
        skipped = [e for e in self.episodes if e.skipped]
        if skipped:
            lines.append(
                f"skipped {len(skipped)} episode(s): "
                + "; ".join(f"{e.index}: {e.skipped}" for e in skipped[:5])
            )
        if self.note:
            lines.append(f"note: {self.note}")
        if self.checked == 0:
            lines.append("no episode returned a trajectory, so nothing was checked")
        lines.extend(stall.format() for stall in self.stalls)
        checks = "tokens, loss-mask, prompt-prefix, versions, logprobs-engine"
        checks += ", logprobs-model" if self.model_parity else ""
        if self.stall_threshold_s:
            checks += f", event-loop (blocked {self.stall_threshold_s * 1000:.0f} ms or more)"
        lines.append(f"checks: {checks}")
        lines.append(f"logprob parity with the model: {self.model_parity or 'off'}")
        lines.append(self.summary())
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raise AssertionError with the full report unless every episode passed."""
        if not self.ok:
            raise AssertionError("train-inference consistency check failed:\n" + self.format())


def _fix_for(summary: TracebackSummary) -> str:
    """Where to look: the user's own line when the traceback has one, else where it was raised."""
    full = "`areal-devkit run` shows the full traceback"
    if not summary.where:
        return full
    where = f"{'your code at' if summary.users else 'raised at'} {summary.where}"
    return f"{where}" + (f": {summary.source}" if summary.source else "") + f"; {full}"


def _failure_key(problem: Problem) -> str:
    """Two episodes that failed the same way share a key (object addresses dropped)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", f"{problem.check}|{problem.cause}|{problem.fix}")


def _same_failures(episodes: list[EpisodeCheck]) -> dict[int, list[int]]:
    """Episode index -> every episode index rejected with the same error, for groups of 2+."""
    by_key: dict[str, list[int]] = {}
    for episode in episodes:
        if len(episode.problems) == 1 and episode.problems[0].check == EPISODE:
            by_key.setdefault(_failure_key(episode.problems[0]), []).append(episode.index)
    return {i: group for group in by_key.values() if len(group) > 1 for i in group}


def _ranges(indices: list[int]) -> str:
    """``0-3, 5, 7-8``: episode numbers compactly."""
    spans: list[list[int]] = []
    for i in sorted(indices):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def parity_model(engine: Any) -> tuple[Any, bool, str | None]:
    """``(model, raw_logprobs, None)`` for a LocalEngine, else ``(None, False, why not)``."""
    from areal_runtime.engine.local import LocalEngine

    if isinstance(engine, LocalEngine):
        return engine.model, engine.raw_logprobs, None
    return (
        None,
        False,
        f"the engine is a {type(engine).__name__}, not a LocalEngine, so logprobs are not "
        "recomputed with the model; tokens, masks, versions and the engine's logprobs are "
        "still checked (use --engine local or hf:PATH for logprob parity)",
    )


async def acheck_workflow(
    workflow: Any,
    rows: list[dict[str, Any]],
    engine: Any,
    *,
    workflow_kwargs: dict[str, Any] | None = None,
    group_size: int = 1,
    concurrency: int = 16,
    tokenizer: Any = None,
    atol: float = DEFAULT_ATOL,
    allow_untrained: bool = False,
    stall_threshold_s: float | None = None,
) -> ConsistencyReport:
    """Run ``workflow`` over ``rows`` on ``engine`` and check every trajectory; with
    ``stall_threshold_s``, also that the workflow's code never blocked the event loop that
    long (first-use set-up, the runtime's own work and a busy machine's waits do not count)."""
    start = time.perf_counter()
    recorder = RecordingEngine(engine)
    tokenizer = tokenizer if tokenizer is not None else getattr(engine, "tokenizer", None)
    result = await run_rollout(
        workflow,
        rows,
        recorder,
        workflow_kwargs=workflow_kwargs,
        tokenizer=tokenizer,
        group_size=group_size,
        concurrency=concurrency,
        stall_threshold_s=stall_threshold_s,
        progress=False,
    )
    model, raw_logprobs, note = parity_model(engine)
    version = engine.get_version() if hasattr(engine, "get_version") else None
    checks = []
    for record in result.episodes:
        if not record.accepted:
            checks.append(_rejected(record))
            continue
        problems = check_trajectory(
            record.trajectory,
            recorder.calls(record.task_id),
            model,
            tokenizer,
            episode=record.index,
            raw_logprobs=raw_logprobs,
            model_version=version,
            atol=atol,
            allow_untrained=allow_untrained,
        )
        checks.append(EpisodeCheck(record.index, problems))
    mode = None
    if model is not None:
        semantics = "raw logits" if raw_logprobs else "temperature-scaled logits"
        mode = f"on ({type(engine).__name__}, {semantics}, atol {atol:g})"
    stalls = [stall for stall in result.report.stalls if stall.is_workflows]
    wall_s = time.perf_counter() - start
    return ConsistencyReport(checks, mode, note, wall_s, stalls, stall_threshold_s)


def check_workflow(
    workflow: Any, rows: list[dict[str, Any]], engine: Any, **kwargs: Any
) -> ConsistencyReport:
    """Synchronous :func:`acheck_workflow`, for scripts and the CLI."""
    return asyncio.run(acheck_workflow(workflow, rows, engine, **kwargs))


def _rejected(record: Any) -> EpisodeCheck:
    if record.reason in _SKIP_REASONS:
        return EpisodeCheck(record.index, skipped=f"rejected ({record.reason})")
    summary = summarize_traceback(record.error or "")
    return EpisodeCheck(
        record.index,
        [
            Problem(
                record.index,
                EPISODE,
                f"the episode was rejected ({record.reason}), so it could not be checked",
                cause=summary.error or "the workflow failed",
                fix=_fix_for(summary),
            )
        ],
    )
