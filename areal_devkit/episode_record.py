# SPDX-License-Identifier: Apache-2.0
"""The trajectory JSONL: one episode a line, one schema, one writer and one reader.

``areal-devkit run --output x.jsonl`` and ``train`` write the rollout's episodes, ``serve``
writes the proxy's sessions, and ``view`` reads any of them. Every line is an
:class:`EpisodeRecord` written by :func:`episode_line` and read by :func:`read_episodes`, so
the three writers cannot drift apart from each other or from the viewer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from areal_devkit.errors import UsageError
from areal_devkit.runtime_facade import JsonlError, atomic_write_text, iter_jsonl

_OUTCOME_KEYS = ("episode", "accepted", "reward", "reason", "error")
_OPTIONAL_KEYS = ("session_id", "completion_ids", "step")
_RECORD_KEYS = frozenset(_OUTCOME_KEYS + _OPTIONAL_KEYS)  # every other key is a tensor


@dataclass
class EpisodeRecord:
    """One episode: its outcome and its trajectory tensors as nested lists.

    ``accepted``: its trajectory is training data (the workflow executor accepted it; for a
    served session: its completions reached the agent and were recorded). ``reason`` and
    ``error`` say why an episode was rejected. ``session_id`` and ``completion_ids`` come with
    a served session, ``step`` with a training step's episode.
    """

    episode: int
    accepted: bool
    reward: float | None
    reason: str | None = None
    error: str | None = None
    tensors: dict[str, Any] = field(default_factory=dict)  # input_ids, loss_mask... as lists
    session_id: str | None = None
    completion_ids: list[str] | None = None
    step: int | None = None

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {key: getattr(self, key) for key in _OUTCOME_KEYS}
        line.update({k: getattr(self, k) for k in _OPTIONAL_KEYS if getattr(self, k) is not None})
        line.update(self.tensors)
        return line

    @classmethod
    def from_json(cls, item: dict[str, Any], default_index: int) -> EpisodeRecord:
        """A parsed line; a field of the wrong type is a ValueError naming it."""
        reward = item.get("reward")
        if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
            raise ValueError(f"reward must be a number or null, got {reward!r}")
        index = item.get("episode", default_index)
        if isinstance(index, bool) or not isinstance(index, int):
            raise ValueError(f"episode must be an integer, got {index!r}")
        accepted = item.get("accepted", True)
        if not isinstance(accepted, bool):
            raise ValueError(f"accepted must be true or false, got {accepted!r}")
        return cls(
            episode=index,
            accepted=accepted,
            reward=reward,
            reason=_text_or_none(item, "reason"),
            error=_text_or_none(item, "error"),
            tensors={k: v for k, v in item.items() if k not in _RECORD_KEYS},
            session_id=_text_or_none(item, "session_id"),
            completion_ids=item.get("completion_ids"),
            step=item.get("step"),
        )


def _text_or_none(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string or null, got {value!r}")
    return value


def tensors_as_lists(batch: dict[str, Any]) -> dict[str, Any]:
    """The tensors of a padded batch (or of one episode's trajectory) as nested lists."""
    return {k: v.tolist() for k, v in batch.items() if hasattr(v, "tolist")}


def episode_line(record: EpisodeRecord) -> str:
    """The JSONL line of one episode (with its newline): the one way an episode is written."""
    return json.dumps(record.to_json()) + "\n"


def write_episodes(path: Path, records: list[EpisodeRecord]) -> None:
    """Replace ``path`` with ``records`` atomically: a half-written file never replaces a good one."""
    atomic_write_text(path, "".join(episode_line(r) for r in records))


def read_episodes(path: Path) -> list[EpisodeRecord]:
    """Every episode of a trajectory JSONL; a line that is not one is a UsageError naming it."""
    records = []
    try:
        for number, item in iter_jsonl(path):
            try:
                records.append(EpisodeRecord.from_json(item, number - 1))
            except ValueError as exc:
                raise UsageError(
                    f"{path}:{number}: not an episode line of areal-devkit run --output ({exc})"
                ) from None
    except JsonlError as exc:
        raise UsageError(str(exc)) from None
    return records
