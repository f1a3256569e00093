# SPDX-License-Identifier: Apache-2.0
"""What a sandbox run returns: the same fields for the local and the remote runners."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TIMEOUT_EXIT_CODE = 124
"""Exit code of a run stopped by its timeout (coreutils' ``timeout`` convention, as AReaL's)."""


@dataclass
class RunResult:
    """Output of one run; ``error`` is the last line that explains a failure, else None."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    charts: list[Any] = field(default_factory=list)
    error: str | None = None


DaytonaRunResult = RunResult
"""AReaL's name for the result (``areal.infra.sandbox.DaytonaRunResult``)."""


def last_non_empty_line(text: str) -> str | None:
    """The line a traceback ends with (``ZeroDivisionError: ...``): the failure in one line."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return None
