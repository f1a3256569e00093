# SPDX-License-Identifier: Apache-2.0
"""flake8 entry point (``ARL``): flake8 handles noqa, --select, --extend-ignore, per-file-ignores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from areal_lint import __version__
from areal_lint.options import FLAGS, LintOptions, options_from_flags
from areal_lint.runner import lint_source


class ArealLintPlugin:
    name = "areal-lint"
    version = __version__
    options = LintOptions()

    def __init__(self, tree: Any, lines: list[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        for flag, help_text in FLAGS.items():
            manager.add_option(
                f"--arl-{flag}", default=None, parse_from_config=True, help=help_text
            )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.options = options_from_flags(options)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for finding in lint_source("".join(self.lines), self.filename, self.options):
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
