# SPDX-License-Identifier: Apache-2.0
"""The consistency check of the first training batch against what the engine really sampled.

A workflow that re-tokenizes its completion, drops the stop token, shifts the loss mask by one
or copies logprobs from the wrong turn produces trajectories that *look* fine and silently
train the wrong thing. Before the first update the trainer calls :func:`check_first_batch`
with the batch and the engine's own records; a failing report stops training unless
``allow_mismatch`` is set.

``check_first_batch`` is the one hook for a fuller checker (``areal-devkit check``): it receives
the batch and every :class:`EngineRecord` of the episodes in it, and returns a
:class:`ConsistencyReport`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from areal_runtime import workflow_context

LOGPROB_TOLERANCE = 1e-3
MAX_PROBLEMS_SHOWN = 8


@dataclass(frozen=True)
class EngineRecord:
    """One ``agenerate`` call as the engine answered it."""

    task_id: int | None
    input_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    output_logprobs: tuple[float, ...]
    output_versions: tuple[int, ...]


@dataclass
class ConsistencyReport:
    """What the check found; ``ok`` is False when any trained token disagrees with the engine."""

    sequences: int = 0
    checked_tokens: int = 0
    max_logprob_diff: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def format(self) -> str:
        head = (
            f"consistency check of the first batch: {self.sequences} sequences, "
            f"{self.checked_tokens} trained tokens, max |logprob - engine| "
            f"{self.max_logprob_diff:.2e}"
        )
        if self.ok:
            return head + ": OK"
        shown = self.problems[:MAX_PROBLEMS_SHOWN]
        more = len(self.problems) - len(shown)
        lines = [head + f": {len(self.problems)} problem(s)"]
        lines += [f"  - {p}" for p in shown]
        if more:
            lines.append(f"  ... and {more} more")
        return "\n".join(lines)


class RecordingEngine:
    """Wraps an engine and keeps what each ``agenerate`` returned, keyed by the episode's task id.

    Everything else is delegated, so workflows and the agent proxy see the real engine.
    Recording stops (and the records are dropped) with :meth:`stop_recording`.
    """

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._recording = True
        self.records: dict[int | None, list[EngineRecord]] = defaultdict(list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    @property
    def inner(self) -> Any:
        return self._engine

    async def agenerate(self, req: Any) -> Any:
        resp = await self._engine.agenerate(req)
        if self._recording:
            self.records[workflow_context.get().task_id].append(
                EngineRecord(
                    task_id=workflow_context.get().task_id,
                    input_tokens=tuple(resp.input_tokens),
                    output_tokens=tuple(resp.output_tokens),
                    output_logprobs=tuple(resp.output_logprobs),
                    output_versions=tuple(resp.output_versions),
                )
            )
        return resp

    def get_version(self) -> int:
        return self._engine.get_version()

    def set_version(self, version: int) -> None:
        self._engine.set_version(version)

    def stop_recording(self) -> None:
        self._recording = False
        self.records.clear()


def _segments(mask: list[int]) -> list[tuple[int, int]]:
    """``[start, end)`` runs of ones."""
    runs, start = [], None
    for i, m in enumerate([*mask, 0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    return runs


def check_first_batch(
    batch: list[tuple[int, dict[str, Any]]],
    engine_records: dict[int | None, list[EngineRecord]],
    tolerance: float = LOGPROB_TOLERANCE,
) -> ConsistencyReport:
    """Check every trained token of ``batch`` against the engine's records.

    ``batch`` holds ``(task_id, trajectory)`` pairs (a trajectory is a group: ``[G, L]``
    tensors); ``engine_records`` maps a task id to the engine calls made by that episode.
    Every run of loss-masked tokens must be the concatenation of whole engine outputs of the
    same episode, in order, and the trajectory's logprobs there must match the engine's within
    ``tolerance``.
    """
    report = ConsistencyReport()
    for task_id, traj in batch:
        records = engine_records.get(task_id, [])
        ids = traj["input_ids"].tolist()
        masks = traj["loss_mask"].tolist()
        logprobs = traj["logprobs"].tolist()
        attn = traj["attention_mask"].tolist() if "attention_mask" in traj else None
        for row, (seq, mask, lps) in enumerate(zip(ids, masks, logprobs, strict=True)):
            report.sequences += 1
            length = int(sum(attn[row])) if attn is not None else len(seq)
            where = f"episode {task_id}, sequence {row}"
            if not records:
                report.problems.append(
                    f"{where}: the engine has no record of this episode's generations "
                    "(did the workflow call a different engine?)"
                )
                continue
            for start, end in _segments(mask[:length]):
                _check_segment(report, where, seq, lps, start, end, records, tolerance)
    return report


def _check_segment(
    report: ConsistencyReport,
    where: str,
    seq: list[int],
    lps: list[float],
    start: int,
    end: int,
    records: list[EngineRecord],
    tolerance: float,
) -> None:
    pos = start
    while pos < end:
        # Prefer the call whose prompt is exactly the tokens before this run (group members
        # and turns often produce the same output tokens with different logprobs).
        match, exact = None, False
        prefix = tuple(seq[:pos])
        for rec in records:
            out = rec.output_tokens
            if out and tuple(seq[pos : pos + len(out)]) == out and pos + len(out) <= end:
                same_prompt = rec.input_tokens == prefix
                if (
                    match is None
                    or (same_prompt and not exact)
                    or (same_prompt == exact and len(out) > len(match.output_tokens))
                ):
                    match, exact = rec, same_prompt
        if match is None:
            near = min(
                records,
                key=lambda r: -_common_prefix(r.output_tokens, seq[pos:end]),
            )
            report.problems.append(
                f"{where}: loss-masked tokens {pos}..{end - 1} {seq[pos:end][:12]} are not an "
                f"output of the engine (closest engine output: {list(near.output_tokens)[:12]}); "
                "train on resp.output_tokens exactly, with loss_mask 1 on them and 0 elsewhere"
            )
            return
        n = len(match.output_tokens)
        for k in range(n):
            diff = abs(float(lps[pos + k]) - float(match.output_logprobs[k]))
            report.max_logprob_diff = max(report.max_logprob_diff, diff)
            if diff > tolerance:
                report.problems.append(
                    f"{where}: logprob of token {pos + k} is {lps[pos + k]:.4f} but the engine "
                    f"sampled it with {match.output_logprobs[k]:.4f} (|diff| {diff:.2e} > "
                    f"{tolerance:g}); copy resp.output_logprobs into 'logprobs' at the "
                    "completion's positions"
                )
                break
        report.checked_tokens += n
        pos += n


def _common_prefix(a: tuple[int, ...], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
