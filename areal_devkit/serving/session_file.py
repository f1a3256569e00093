# SPDX-License-Identifier: Apache-2.0
"""The proxy's sessions as a trajectory JSONL that ``areal-devkit view`` reads.

One line per session that has at least one completion: the session id, the last reward set
(``null`` if none), and every completion as one row (``individual`` export: the engine's
tokens, loss mask, logprobs, versions, the completion's own reward). The file is replaced
atomically (written next to it, then renamed), so a reader never sees half of it. Sessions the
proxy forgets (ended and exported by a trainer through ``/export_trajectories``) stay in the
file: they are kept from the first time they were seen. A periodic save with nothing new
(no completion, no reward since the last) leaves the file alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.episode_record import EpisodeRecord, episode_line, tensors_as_lists
from areal_devkit.runtime_facade import atomic_write_text


class SessionFile:
    """Writes ``state``'s sessions to ``path``; ``write()`` returns how many it wrote."""

    def __init__(self, state: Any, path: Path) -> None:
        self.state = state
        self.path = path
        self._seen: dict[str, Any] = {}
        # Per session: (signature, JSON line or None); only a changed session is serialized
        # again, so a periodic save while one agent works costs that one session.
        self._lines: dict[str, tuple[Any, str | None]] = {}
        self._written: Any = None  # what the file holds, to skip rewriting an unchanged one
        self._count = 0

    def write(self) -> int:
        self._seen.update(self.state.sessions)
        lines = []
        signatures = []
        for index, (sid, session) in enumerate(self._seen.items()):
            items = list(session.completions.values())
            signature = (
                index,
                [(i.interaction_id, i.reward, i.output_message_list is not None) for i in items],
            )
            signatures.append(signature)
            cached = self._lines.get(sid)
            if cached is None or cached[0] != signature:
                record = session_record(index, session)
                cached = (signature, None if record is None else episode_line(record))
                self._lines[sid] = cached
            if cached[1] is not None:
                lines.append(cached[1])
        if signatures == self._written and self.path.exists():
            return self._count
        atomic_write_text(self.path, "".join(lines))
        self._written, self._count = signatures, len(lines)
        return len(lines)


def session_record(index: int, session: Any) -> EpisodeRecord | None:
    """One session as an episode, or None when it has no finished completion yet.

    Accepted: every completion written reached the agent and was recorded (the proxy drops
    the others), which is what a trainer reading the file would train on.
    """
    items = list(session.completions.export_interactions("individual").values())
    if not items:
        return None
    batch = runtime.concat_padded_tensors([item.to_tensor_dict() for item in items])
    rewards = [item.reward for item in items if item.reward is not None]
    return EpisodeRecord(
        episode=index,
        accepted=True,
        reward=rewards[-1] if rewards else None,
        tensors=tensors_as_lists(batch),
        session_id=session.session_id,
        completion_ids=[item.interaction_id for item in items],
    )
