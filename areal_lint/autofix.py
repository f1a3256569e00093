# SPDX-License-Identifier: Apache-2.0
"""Apply autofixes: rewrite the flagged nodes with libcst, add needed imports, repeat.

Fixes run until nothing fixable is left (a fix can expose another), so the result is
idempotent: fixing the output again changes nothing.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from areal_lint.finding import Finding
from areal_lint.noqa import noqa_lines, silenced
from areal_lint.options import LintOptions
from areal_lint.runner import lint_module, might_have_findings

MAX_ROUNDS = 5


class _Rewriter(cst.CSTTransformer):
    def __init__(self, fixes: dict[int, Finding]) -> None:
        self.fixes = fixes

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        finding = self.fixes.get(id(original_node))
        if finding is None or finding.rewrite is None:
            return updated_node
        return finding.rewrite(updated_node)


def _ensure_imports(module: cst.Module, names: set[str]) -> cst.Module:
    present = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None:
                            present.add(cst.Module(body=[]).code_for_node(alias.name))
    missing = sorted(names - present)
    if not missing:
        return module
    new = [cst.parse_statement(f"import {name}\n") for name in missing]
    body = list(module.body)
    position = 0
    for i, stmt in enumerate(body):  # after the docstring and __future__ imports
        code = cst.Module(body=[]).code_for_node(stmt)
        if i == 0 and code.lstrip().startswith(('"""', "'''", '"', "'")):
            position = 1
        elif code.startswith("from __future__"):
            position = i + 1
    return module.with_changes(body=[*body[:position], *new, *body[position:]])


def fix_source(
    source: str, options: LintOptions | None = None, *, unsafe: bool = False
) -> tuple[str, list[Finding]]:
    """The fixed source and the findings that were fixed.

    A round whose output would not parse is dropped (the source stays as the last round left
    it), so a fixer bug can never turn a working file into a broken one.
    """
    options = options or LintOptions()
    fixed: list[Finding] = []
    if not might_have_findings(source):
        return source, fixed
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return source, fixed
    for _ in range(MAX_ROUNDS):
        noqa = noqa_lines(source)
        todo = {  # one fix per node a round; a second one on the same statement waits a round
            id(f.replaced_node): f
            for f in lint_module(module, options)
            if f.fix == "safe" or (f.fix == "unsafe" and unsafe)
            if not silenced(noqa, f.line, f.code)
        }
        if not todo:
            break
        new_module = module.visit(_Rewriter(todo))
        needs = {name for f in todo.values() for name in f.needs}
        new_code = _ensure_imports(new_module, needs).code
        if new_code == source:
            break
        try:
            module = cst.parse_module(new_code)
        except cst.ParserSyntaxError:
            break
        fixed.extend(todo.values())
        source = new_code
    return source, fixed
