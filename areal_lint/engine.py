# SPDX-License-Identifier: Apache-2.0
"""Lint a source string: parse once, pre-pass, one traversal dispatching to every rule.

Files without ``async def`` are skipped before parsing; positions are computed only when there
is something to report; a file that does not parse yields one ARL000 finding.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import libcst as cst

from areal_lint.finding import Finding
from areal_lint.index import build_index
from areal_lint.options import LintOptions
from areal_lint.positions import positions_of
from areal_lint.rules import FAMILIES, RULES_BY_CODE
from areal_lint.rules.base import Rule
from areal_lint.visitor import LintVisitor
from areal_lint.walk import walk

PARSE_ERROR = "ARL000"


# Every rule needs an ``async def`` in the file, except ARL403/404 on ``AsyncRewardWrapper(...)``.
_WORTH_PARSING = re.compile(r"\basync(?:\s|\\)+def\b|AsyncRewardWrapper")


def might_have_findings(source: str) -> bool:
    """Cheap text check that lets most files skip the (expensive) libcst parse."""
    return _WORTH_PARSING.search(source) is not None


def lint_source(
    source: str, filename: str = "<unknown>", options: LintOptions | None = None
) -> list[Finding]:
    """Every finding in ``source``, sorted by position."""
    if not might_have_findings(source):
        return []
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return [
            Finding(
                PARSE_ERROR,
                f"could not parse {filename}: {exc.message} (line {exc.raw_line}); fix the syntax error",
                exc.raw_line,
                max(exc.raw_column, 0),
            )
        ]
    return lint_module(module, options or LintOptions())


def lint_module(module: cst.Module, options: LintOptions) -> list[Finding]:
    """Findings for a parsed module; each keeps its node so ``--fix`` can rewrite it."""
    pending: list[tuple[type[Rule], cst.CSTNode, dict[str, Any]]] = []
    reported: set[int] = set()

    def report(rule: type[Rule], node: cst.CSTNode, rewrite: Any = None, **kwargs: Any) -> None:
        if id(node) in reported:  # one finding per construct (spec §6.1)
            return
        if rule.opt_in and rule.code not in options.enable:
            return
        reported.add(id(node))
        pending.append((rule, node, {"rewrite": rewrite, **kwargs}))

    visitor = LintVisitor(
        build_index(module, options),
        options,
        checks=[family.check for family in FAMILIES if hasattr(family, "check")],
        report=report,
        on_assign=[family.on_assign for family in FAMILIES if hasattr(family, "on_assign")],
        on_name=[family.on_name for family in FAMILIES if hasattr(family, "on_name")],
        on_leave_function=[
            family.on_leave_function for family in FAMILIES if hasattr(family, "on_leave_function")
        ],
        on_with=[family.on_with for family in FAMILIES if hasattr(family, "on_with")],
    )
    walk(module, visitor)
    if not pending:
        return []
    positions = positions_of(module, (node for _, node, _ in pending))
    findings = []
    for rule, node, kwargs in pending:
        rewrite = kwargs.pop("rewrite")
        needs = kwargs.pop("needs", ())
        fix_node = kwargs.pop("fix_node", None)
        (line, col), (end_line, end_col) = positions[id(node)]
        findings.append(
            Finding(
                rule.code,
                rule.render(**kwargs),
                line,
                col,
                end_line,
                end_col,
                fix=rule.fix if rewrite is not None else None,
                node=node,
                rewrite=_with_imports(rewrite, needs) if rewrite is not None else None,
                fix_node=fix_node,
            )
        )
    findings.sort(key=lambda f: (f.line, f.col, f.code))
    return findings


def _with_imports(rewrite: Any, needs: tuple[str, ...]) -> Any:
    rewrite.needs = needs if needs else getattr(rewrite, "needs", ())
    return rewrite


def lint_file(path: str | Path, options: LintOptions | None = None) -> list[Finding]:
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return [Finding(PARSE_ERROR, f"could not read {path} as UTF-8: {exc.reason}", 1, 0)]
    return lint_source(source, str(path), options)


def rule_for(code: str) -> type[Rule] | None:
    return RULES_BY_CODE.get(code)
