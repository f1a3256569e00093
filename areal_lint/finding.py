# SPDX-License-Identifier: Apache-2.0
"""A lint finding: code, message, position, and whether an autofix exists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

FixKind = Literal["safe", "unsafe"]
# A file the linter could not check (unparsable, unreadable, or a linter bug): one finding, so
# the run goes on and the problem is visible under a code that flake8 and --select understand.
NOT_LINTED = "ARL000"


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    fix: FixKind | None = None
    # For --fix, not part of equality or output: the reported node, the node the fix replaces
    # (the reported one unless a fix rewrites a whole statement), the replacement builder and the
    # modules the replacement needs imported.
    node: Any = field(default=None, compare=False, repr=False)
    rewrite: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    fix_node: Any = field(default=None, compare=False, repr=False)
    needs: tuple[str, ...] = field(default=(), compare=False, repr=False)  # imports the fix adds

    @property
    def replaced_node(self) -> Any:
        return self.node if self.fix_node is None else self.fix_node

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
