# SPDX-License-Identifier: Apache-2.0
"""A formatted traceback, read back as what a person needs: where in their code, and the error.

Rejected episodes carry ``traceback.format_exc()`` text. Its last lines are often the caret
line and a frame inside the runtime or a library; the reader wants the last frame that is
their own code, and the exception line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from areal_runtime.infra.stall_detector import frame_owner

_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<name>.+)$')


@dataclass(frozen=True)
class TracebackSummary:
    """The error line, and the frame to look at (the user's innermost, else the last)."""

    error: str
    where: str = ""
    source: str = ""
    users: bool = False


def summarize_traceback(text: str) -> TracebackSummary:
    """Parse ``traceback.format_exc()`` text (or a plain message) into a summary."""
    lines = text.strip().splitlines()
    frames: list[tuple[str, str, str]] = []  # (file:line in name, source, file)
    last_frame_at = -1
    for i, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is None:
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        source = "" if _FRAME.match(lines[i + 1] if i + 1 < len(lines) else "") else nxt
        where = f"{match['file']}:{match['line']} in {match['name']}"
        frames.append((where, source, match["file"]))
        last_frame_at = i
    tail = lines[last_frame_at + 1 :] if frames else lines
    error_lines = [line for line in tail if line and not line.startswith((" ", "\t"))]
    error = " ".join(error_lines).strip() or (lines[-1].strip() if lines else "")
    if not frames:
        return TracebackSummary(error)
    users = [f for f in frames if frame_owner(f[2]) == "workflow"]
    where, source, _ = (users or frames)[-1]
    return TracebackSummary(error, where, source, users=bool(users))
