# SPDX-License-Identifier: Apache-2.0
"""A lint finding: code, message, position, and whether an autofix exists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

FixKind = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    fix: FixKind | None = None
    # The node and the replacement builder, for --fix; not part of equality or output.
    node: Any = field(default=None, compare=False, repr=False)
    rewrite: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)

    def format(self, path: str) -> str:
        return f"{path}:{self.line}:{self.col + 1}: {self.code} {self.message}"

    def as_dict(self, path: str) -> dict[str, Any]:
        return {
            "path": path,
            "code": self.code,
            "message": self.message,
            "line": self.line,
            "col": self.col + 1,
            "end_line": self.end_line,
            "end_col": self.end_col + 1,
            "fix": self.fix,
        }
