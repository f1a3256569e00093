# SPDX-License-Identifier: Apache-2.0
"""Warnings and errors that libraries log during an episode, kept with that episode.

An SDK that logs "Error getting response" from inside an episode says neither which episode
nor what the model produced (the Agents SDK redacts model data by default). While a rollout
runs, such records become the episode's notes, and the executor adds the model's last reply
to them, so ``areal-devkit run`` shows the text that could not be used.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from areal_runtime import workflow_context

LOGGED = "logged "  # how the notes this module writes start, after the logger's name
REPLY_CHARS = 300


class EpisodeLogNotes(logging.Handler):
    """A root handler: WARNING and above, logged inside an episode, become its notes.

    Records logged outside any episode go where they would have gone without this handler
    (Python's last-resort stderr output when nothing else handles them).
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        if workflow_context.collecting():
            workflow_context.note(
                f"{record.name} {LOGGED}{record.levelname}: {record.getMessage()}"
            )
        elif not _handled_elsewhere(record, self) and logging.lastResort is not None:
            logging.lastResort.handle(record)


def _handled_elsewhere(record: logging.LogRecord, mine: logging.Handler) -> bool:
    """Whether a handler other than ``mine`` on the record's logger chain takes it."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(h is not mine for h in logger.handlers):
            return True
        logger = logger.parent if logger.propagate else None
    return False


@contextmanager
def episode_log_notes() -> Iterator[None]:
    """Install :class:`EpisodeLogNotes` on the root logger for the block."""
    handler = EpisodeLogNotes()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def last_reply_note(traj: dict[str, Any] | None, tokenizer: Any) -> str | None:
    """ "the model's last reply: '...'" from the trajectory's last trained tokens, or None."""
    if traj is None or tokenizer is None or "input_ids" not in traj or "loss_mask" not in traj:
        return None
    ids, mask = traj["input_ids"][-1].tolist(), traj["loss_mask"][-1].tolist()
    sampled = [int(t) for t, m in zip(ids, mask) if m]
    if not sampled:
        return None
    text = tokenizer.decode(sampled, skip_special_tokens=False)
    if len(text) > REPLY_CHARS:
        text = "..." + text[-REPLY_CHARS:]
    eos = getattr(tokenizer, "eos_token_id", None)
    cut = eos is not None and sampled[-1] != eos
    return f"the model's last reply{' (cut off at the token limit)' if cut else ''}: {text!r}"
