# SPDX-License-Identifier: Apache-2.0
"""flake8 entry point (``ARL``): flake8 handles noqa, --select, --extend-ignore, per-file-ignores.

The one exception: a ``# noqa`` naming flake8-async's code for an ARL check (``ASYNC230`` for
ARL101) is honoured here, since flake8 matches only the code it was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from areal_lint import __version__
from areal_lint.aliases import aliases_of
from areal_lint.noqa import noqa_lines
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
        source = "".join(self.lines)
        findings = lint_source(source, self.filename, self.options)
        noqa = noqa_lines(source) if findings else {}
        for finding in findings:
            codes = noqa.get(finding.line)
            if codes and codes & aliases_of(finding.code):
                continue  # a noqa comment naming ASYNC230 (flake8 itself honours only the ARL code)
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
