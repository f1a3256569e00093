# SPDX-License-Identifier: Apache-2.0
"""Episodes for the viewer, from a rollout's records or from a trajectory file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from areal_devkit.episode_record import read_episodes
from areal_devkit.errors import UsageError
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
        raise UsageError(f"{path} does not exist; write one with areal-devkit run --output")
    if path.suffix == ".jsonl":
        return _from_jsonl(path)
    if path.suffix == ".pt":
        import torch

        try:
            batch = torch.load(path, weights_only=False)
            if not isinstance(batch, dict):
                raise UsageError("it holds no dict of tensors")
            return [
                EpisodeView(i, True, row.reward, None, None, [row])
                for i, row in enumerate(rows_of(batch))
            ]
        except Exception as exc:  # torch.load raises pickle, EOF and runtime errors alike
            raise UsageError(
                f"{path} is not a trajectory batch from areal-devkit run --output ({exc})"
            ) from None
    raise UsageError(f"{path}: the viewer reads .jsonl or .pt trajectory files")


def _from_jsonl(path: Path) -> list[EpisodeView]:
    episodes = []
    for number, record in enumerate(read_episodes(path), start=1):
        try:
            rows = rows_of(record.tensors) if "input_ids" in record.tensors else []
        except Exception as exc:  # a tensor of the wrong shape
            raise UsageError(
                f"{path}: episode {record.episode} (record {number}): its trajectory is not "
                f"areal-devkit run --output's ({type(exc).__name__}: {exc})"
            ) from None
        episodes.append(
            EpisodeView(
                record.episode, record.accepted, record.reward, record.reason, record.error, rows
            )
        )
    return episodes
