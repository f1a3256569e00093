# SPDX-License-Identifier: Apache-2.0
"""What every fuzz target checks after a hostile input: no traceback, no 5xx, a named field."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any


class LogWatch(logging.Handler):
    """Records every log record and everything written to stderr while active."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.stderr = io.StringIO()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        """Every traceback logged or printed: each one is a bug the suite reports."""
        found = [
            f"{r.name}: {r.getMessage()}"
            for r in self.records
            if r.exc_info or "Traceback (most recent call last)" in r.getMessage()
        ]
        if "Traceback (most recent call last)" in self.stderr.getvalue():
            found.append(self.stderr.getvalue())
        return found


@contextlib.contextmanager
def watched() -> Iterator[LogWatch]:
    """Capture logging (every logger, every level) and stderr for the block."""
    watch = LogWatch()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(watch)
    root.setLevel(logging.DEBUG)
    try:
        with contextlib.redirect_stderr(watch.stderr):
            yield watch
    finally:
        root.removeHandler(watch)
        root.setLevel(old_level)
    sys.stderr.flush()


def assert_no_tracebacks(watch: LogWatch) -> None:
    problems = watch.tracebacks()
    assert not problems, "a traceback was logged or printed:\n" + "\n".join(problems)


def error_message(text: str) -> str:
    """The human message of an error body in any of the shapes the servers use."""
    body = json.loads(text)
    error = body["error"]
    message = error["message"] if isinstance(error, dict) else error
    assert isinstance(message, str) and message, f"an error body without a message: {text}"
    return message


def assert_answer(status: int, text: str, names: set[str] | None = None) -> None:
    """Never a 5xx; a 4xx has a JSON error message naming one of ``names`` when given."""
    assert status < 500, f"HTTP {status}: {text[:500]}"
    if status >= 400:
        message = error_message(text)
        if names:
            spelled = {form for n in names for form in (str(n), repr(n), repr(n)[1:-1])}
            assert any(form in message for form in spelled), (
                f"HTTP {status} names none of {sorted(map(str, names))}: {message[:300]}"
            )


def snapshot(value: Any) -> str:
    """A comparable copy of nested state (session caches hold dataclasses and tensors)."""
    return repr(value)
