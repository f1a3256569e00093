# SPDX-License-Identifier: Apache-2.0
"""flake8 entry point (``ARL``): flake8 handles noqa, --select, --extend-ignore, per-file-ignores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from areal_lint import __version__
from areal_lint.engine import lint_source
from areal_lint.options import LintOptions, options_from

FLAGS = {
    "episode-methods": "extra episode method names (comma-separated); default arun_episode",
    "blocking-calls": "extra blocking calls as pattern->suggestion (comma-separated)",
    "reward-functions": "names of reward functions to treat as such (comma-separated)",
    "reward-name-regex": "regex of names that look like reward functions",
    "heavy-calls": "extra heavy set-up calls to report inside episodes (comma-separated)",
    "per-episode-ok": "classes that may be built per episode (comma-separated)",
    "enable": "opt-in codes to enable, e.g. ARL901,ARL902",
}


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
        cls.options = options_from(
            **{
                flag.replace("-", "_"): getattr(options, "arl_" + flag.replace("-", "_"))
                for flag in FLAGS
            }
        )

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for finding in lint_source("".join(self.lines), self.filename, self.options):
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
