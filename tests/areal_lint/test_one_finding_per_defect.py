# SPDX-License-Identifier: Apache-2.0
"""One defect, one finding: no two findings on one construct, across every rule family.

A construct is a call together with the values it made: ``with open(p) as f`` and every later
``f.write(...)``/``json.dump(x, f)`` in that body are one construct, as are nested calls
(``open(p).read()``). Two findings on one construct are allowed only where the later code's
rule documents the pair (``Rule.also_with``), because the two need two fixes.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst
import pytest

from areal_lint.finding import Finding
from areal_lint.rules import ALL_RULES, RULES_BY_CODE
from areal_lint.runner import lint_module

from .harness import EVAL_DIR, eval_files, options_for

FILES = [*eval_files(), *sorted((EVAL_DIR / "autofix").glob("*.py"))]


class _Constructs(cst.CSTVisitor):
    """Per function body: which call made each local, and which calls each call's value reads."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, cst.Call]] = [{}]
        self.sources: dict[int, set[int]] = defaultdict(set)  # call -> calls it is made from

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bodies.append({})

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bodies.pop()

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name) and isinstance(value, cst.Call):
            self.bodies[-1][target.value] = value

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, node.item)

    def visit_Call(self, node: cst.Call) -> None:
        for expr in (node.func, *(a.value for a in node.args)):
            while isinstance(expr, cst.Attribute | cst.Call | cst.Subscript):
                if isinstance(expr, cst.Call):
                    self.sources[id(node)].add(id(expr))
                expr = expr.func if isinstance(expr, cst.Call) else expr.value
            if isinstance(expr, cst.Name) and expr.value in self.bodies[-1]:
                made = self.bodies[-1][expr.value]
                self.sources[id(node)] |= {id(made), *self.sources[id(made)]}


def doubled(module: cst.Module, findings: list[Finding], where: str) -> list[str]:
    """Each finding on a construct that an earlier finding already covers, unless documented."""
    constructs = _Constructs()
    module.visit(constructs)
    code_of = {id(f.node): f.code for f in findings}
    out = []
    for f in findings:
        for made_from in constructs.sources.get(id(f.node), ()):
            first = code_of.get(made_from)
            if first is not None and first not in RULES_BY_CODE[f.code].also_with:
                out.append(f"{where}:{f.line}: {f.code} on what {first} already covers")
    return out


def _findings(source: str) -> tuple[cst.Module, list[Finding]]:
    options = options_for(source)
    options.enable |= {rule.code for rule in ALL_RULES if rule.opt_in}
    module = cst.parse_module(source)
    return module, lint_module(module, options)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_construct_carries_two_codes(path):
    module, findings = _findings(path.read_text())
    assert doubled(module, findings, path.name) == []


def test_the_check_sees_a_doubled_finding():
    """It can fail: the issue's example as main reported it (ARL101, then ARL103 and ARL104)."""
    source = (
        "import json\n\n\nasync def f(path, record):\n"
        "    with open(path) as out:\n        json.dump(record, out)\n        out.write('x')\n"
    )
    module = cst.parse_module(source)
    calls = []
    module.visit(type("Calls", (cst.CSTVisitor,), {"visit_Call": lambda _, n: calls.append(n)})())
    opened, dumped, written = calls
    fake = [Finding("ARL101", "", 5, 9, node=opened), Finding("ARL103", "", 6, 8, node=dumped),
            Finding("ARL104", "", 7, 8, node=written)]  # fmt: skip
    assert doubled(module, fake, "x") == [
        "x:6: ARL103 on what ARL101 already covers",
        "x:7: ARL104 on what ARL101 already covers",
    ]
    assert _findings(source)[1][0].code == "ARL101" and len(_findings(source)[1]) == 1


def test_every_documented_pair_names_a_rule_and_a_reason():
    for rule in ALL_RULES:
        for code, why in rule.also_with.items():
            assert code in RULES_BY_CODE and why.strip(), (rule.code, code)
