# SPDX-License-Identifier: Apache-2.0
"""Read the expectations written in eval files (the syntax is in eval_files/README.md)."""

from __future__ import annotations

import re
import string
from collections import Counter
from pathlib import Path

from areal_lint.options import LintOptions, options_from
from areal_lint.rules import RULES_BY_CODE

EVAL_DIR = Path(__file__).parent / "eval_files"
# Hand-written raw-HTTP agents (issue 37): eval files too, each checking every code.
RAW_HTTP_DIR = EVAL_DIR / "raw_http"
# One expectation: "# ARL140" or "# ARL140: arg, arg"; it ends where the next one starts.
EXPECTATION = re.compile(r"#\s*(ARL\d{3})(?::[ \t]*(.*?))?[ \t]*(?=#\s*ARL\d{3}\b|$)")
FIRST_EXPECTATION = re.compile(r"#\s*ARL\d{3}\b.*$")
ARG = re.compile(r"# ARG --arl-([a-z-]+)=(\S+)")
SELECT = re.compile(r"# ARG --select=(\S+)")
FAMILY = re.compile(r"^arl(\d)")


def eval_files() -> list[Path]:
    return sorted(EVAL_DIR.glob("*.py")) + raw_http_files()


def raw_http_files() -> list[Path]:
    return sorted(RAW_HTTP_DIR.glob("*.py"))


def _fields(template: str) -> list[str]:
    """The placeholders of a message template, in order, each once."""
    names: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name and name not in names:
            names.append(name)
    return names


def render(code: str, args: str | None) -> str:
    """The message the comment's arguments give: split on ", ", the last one takes the rest."""
    rule = RULES_BY_CODE[code]
    fields = _fields(rule.message)
    values = [] if not args else args.split(", ", len(fields) - 1) if fields else [args]
    if len(values) != len(fields):
        raise ValueError(
            f"{code} takes {len(fields)} argument(s) {fields}, the comment gives {args!r}"
        )
    return rule.render(**dict(zip(fields, values, strict=True)))


def expected_messages(source: str) -> Counter[tuple[int, str, str]]:
    """``(line, code, message)`` for each expectation comment (a line may hold several)."""
    out: Counter[tuple[int, str, str]] = Counter()
    for number, line in enumerate(source.splitlines(), start=1):
        if "noqa" in line:
            continue
        for code, args in EXPECTATION.findall(line):
            out[(number, code, render(code, args or None))] += 1
    return out


def expected(source: str) -> set[tuple[int, str]]:
    return {(line, code) for line, code, _ in expected_messages(source)}


def strip_expectations(line: str) -> tuple[str, list[str]]:
    """The line without its expectation comments, and the codes they named."""
    match = FIRST_EXPECTATION.search(line)
    if match is None or "noqa" in line:
        return line, []
    return line[: match.start()], [code for code, _ in EXPECTATION.findall(line)]


def selected_codes(path: Path, source: str) -> tuple[str, ...]:
    """The codes a file checks: its family (``arl1xx_*`` checks ARL1xx), or ``# ARG --select``.

    A file that names no family (``traps_*.py``) checks every code. Like the CLI's --select,
    the choice applies after each node kept its one finding.
    """
    given = SELECT.search(source)
    if given:
        return tuple(given.group(1).split(","))
    family = FAMILY.match(path.name)
    return (f"ARL{family.group(1)}",) if family else ("ARL",)


def options_for(source: str) -> LintOptions:
    return options_from(**{k.replace("-", "_"): v for k, v in ARG.findall(source)})


def flake8_args(source: str) -> list[str]:
    return [f"--arl-{k}={v}" for k, v in ARG.findall(source)]
