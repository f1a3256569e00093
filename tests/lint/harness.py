# SPDX-License-Identifier: Apache-2.0
"""Read the expectations written in eval files."""

import re
from pathlib import Path

from areal_lint.options import LintOptions, options_from

EVAL_DIR = Path(__file__).parent / "eval_files"
EXPECTATION = re.compile(r"#\s*((?:ARL\d{3})(?:\s*,\s*ARL\d{3})*)\s*$")
ARG = re.compile(r"# ARG --arl-([a-z-]+)=(\S+)")


def eval_files() -> list[Path]:
    return sorted(EVAL_DIR.glob("*.py"))


def expected(source: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECTATION.search(line)
        if match and "noqa" not in line:
            out |= {(number, code.strip()) for code in match.group(1).split(",")}
    return out


def options_for(source: str) -> LintOptions:
    return options_from(**{k.replace("-", "_"): v for k, v in ARG.findall(source)})


def flake8_args(source: str) -> list[str]:
    return [f"--arl-{k}={v}" for k, v in ARG.findall(source)]
