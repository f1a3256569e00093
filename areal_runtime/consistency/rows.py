# SPDX-License-Identifier: Apache-2.0
"""A trajectory dict as plain per-row lists, with missing or malformed keys reported.

The checks work on lists so a workflow that returns the wrong thing (no ``logprobs``, ragged
shapes, a list instead of a tensor) gets a problem naming the key instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from areal_runtime.consistency.problem import TRAJECTORY, Problem

_FIXES = {
    "input_ids": "return resp.input_tokens + resp.output_tokens as [1, L] input_ids",
    "loss_mask": "return loss_mask: 1 on resp.output_tokens, 0 on prompt/feedback/tool tokens",
    "logprobs": "return logprobs: resp.output_logprobs at the completion positions, 0.0 elsewhere",
    "versions": "return versions: resp.output_versions at the completion positions, -1 elsewhere",
}


@dataclass
class TrajRow:
    """One unpadded sequence of a trajectory; ``logprobs``/``versions`` None when absent."""

    index: int
    tokens: list[int]
    mask: list[int]
    logprobs: list[float] | None
    versions: list[int] | None

    def trained(self) -> list[int]:
        return [i for i, m in enumerate(self.mask) if m]


def _as_rows(value: Any) -> list[list[Any]] | None:
    """``[B, L]`` as nested lists, or None when it is not two-dimensional."""
    data = value.tolist() if hasattr(value, "tolist") else value
    if not isinstance(data, list | tuple) or not all(isinstance(r, list | tuple) for r in data):
        return None
    return [list(r) for r in data]


def split_rows(traj: Any, episode: Any) -> tuple[list[TrajRow], list[Problem]]:
    """Rows of ``traj`` (padding removed by ``attention_mask``) and problems with its keys."""
    problems: list[Problem] = []

    def problem(message: str, key: str) -> None:
        problems.append(
            Problem(
                episode,
                TRAJECTORY,
                message,
                cause=f"the workflow's trajectory has no usable {key!r}",
                fix=_FIXES.get(key, f"return {key!r} as a [B, L] tensor"),
            )
        )

    if not isinstance(traj, dict):
        problems.append(
            Problem(
                episode,
                TRAJECTORY,
                f"the trajectory is a {type(traj).__name__}, not a dict",
                cause="arun_episode returned the wrong type",
                fix="return a dict of [1, L] tensors (input_ids, loss_mask, logprobs, versions, ...)",
            )
        )
        return [], problems
    columns: dict[str, list[list[Any]]] = {}
    for key in ("input_ids", "loss_mask", "logprobs", "versions", "attention_mask"):
        if key not in traj:
            if key != "attention_mask":
                problem(f"the trajectory has no {key!r} key", key)
            continue
        rows = _as_rows(traj[key])
        if rows is None:
            problem(f"{key!r} is not shaped [B, L]", key)
            continue
        columns[key] = rows
    ids = columns.get("input_ids")
    if ids is None or "loss_mask" not in columns:
        return [], problems
    for key, rows in list(columns.items()):
        shape_ok = len(rows) == len(ids) and all(
            len(r) == len(i) for r, i in zip(rows, ids, strict=True)
        )
        if key != "input_ids" and not shape_ok:
            problem(f"{key!r} does not have the shape of 'input_ids' [B, L]", key)
            del columns[key]
    if "loss_mask" not in columns:
        return [], problems
    out = []
    for r, row_ids in enumerate(ids):
        attention = columns.get("attention_mask", [[1] * len(row_ids)] * len(ids))[r]
        length = sum(1 for a in attention if a) or len(row_ids)
        logprobs = columns.get("logprobs")
        versions = columns.get("versions")
        out.append(
            TrajRow(
                index=r,
                tokens=[int(t) for t in row_ids[:length]],
                mask=[int(m) for m in columns["loss_mask"][r][:length]],
                logprobs=[float(x) for x in logprobs[r][:length]] if logprobs else None,
                versions=[int(v) for v in versions[r][:length]] if versions else None,
            )
        )
    return out, problems
