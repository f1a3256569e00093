# SPDX-License-Identifier: Apache-2.0
"""Episodes for the viewer, from a rollout's records or from a trajectory file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from areal_devkit.trajectory_text import TrajectoryRow, rows_of


@dataclass
class EpisodeView:
    """What the page shows of one episode: outcome, reward and its trajectory rows."""

    index: int
    accepted: bool
    reward: float | None
    reason: str | None
    error: str | None
    rows: list[TrajectoryRow]


def episodes_from_records(records: list[Any]) -> list[EpisodeView]:
    """From ``RolloutResult.episodes`` (accepted and rejected)."""
    return [
        EpisodeView(
            index=r.index,
            accepted=r.accepted,
            reward=r.reward,
            reason=r.reason,
            error=r.error,
            rows=rows_of(r.trajectory) if r.trajectory is not None else [],
        )
        for r in records
    ]


def episodes_from_file(path: Path) -> list[EpisodeView]:
    """From a ``.jsonl`` (one episode a line, as ``run --output`` writes) or a ``.pt`` batch.

    A ``.pt`` file holds only the padded batch of accepted trajectories, so each of its rows is
    shown as one accepted episode.
    """
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; write one with areal-devkit run --output")
    if path.suffix == ".jsonl":
        return _from_jsonl(path)
    if path.suffix == ".pt":
        import torch

        try:
            batch = torch.load(path, weights_only=False)
            if not isinstance(batch, dict):
                raise ValueError("it holds no dict of tensors")
            return [
                EpisodeView(i, True, row.reward, None, None, [row])
                for i, row in enumerate(rows_of(batch))
            ]
        except Exception as exc:  # torch.load raises pickle, EOF and runtime errors alike
            raise ValueError(
                f"{path} is not a trajectory batch from areal-devkit run --output ({exc})"
            ) from None
    raise ValueError(f"{path}: the viewer reads .jsonl or .pt trajectory files")


def _from_jsonl(path: Path) -> list[EpisodeView]:
    episodes = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise ValueError(f"{path}:{number}: each line must be a JSON object")
            try:
                episodes.append(
                    EpisodeView(
                        index=int(item.get("episode", number - 1)),
                        accepted=bool(item.get("accepted", True)),
                        reward=item.get("reward"),
                        reason=item.get("reason"),
                        error=item.get("error"),
                        rows=rows_of(item) if "input_ids" in item else [],
                    )
                )
            except Exception as exc:  # any field of the wrong shape
                raise ValueError(
                    f"{path}:{number}: not an episode line of areal-devkit run --output "
                    f"({type(exc).__name__}: {exc})"
                ) from None
    return episodes
