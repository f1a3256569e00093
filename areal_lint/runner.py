# SPDX-License-Identifier: Apache-2.0
"""Lint a source string: parse once, index, then one walk that feeds every rule family.

Files without ``async def`` are skipped before parsing, and before libcst is even imported:
importing it (and the rule modules built on it) is most of what linting one clean file costs,
so a pre-commit run on files with nothing to parse never pays for it. Positions are computed
only when there is something to report; a file that does not parse yields one ARL000 finding.
When several checks report the same node, ``precedence`` picks the one finding it keeps.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from areal_lint.finding import NOT_LINTED, Finding
from areal_lint.libcst_import import import_libcst
from areal_lint.options import LintOptions
from areal_lint.precedence import winner

if TYPE_CHECKING:
    import libcst as cst

    from areal_lint.rules.base import Hit

# Every rule needs an ``async def`` in the file, except ARL403/404 on ``AsyncRewardWrapper(...)``.
# The check is ``\basync(?:\s|\\)+def\b|AsyncRewardWrapper``, done in two steps: a pattern that
# starts with a \b or holds an alternation is tried at every position of the text (0.1 s over
# AReaL's 3.7 MB, paid before any worker starts), one that starts with a literal is found by a
# fast scan for it, and the word boundary before ``async`` is checked by hand.
_ASYNC_DEF = re.compile(r"async(?:\s|\\)+def\b")


def might_have_findings(source: str) -> bool:
    """Cheap text check that lets most files skip the (expensive) libcst parse."""
    if "AsyncRewardWrapper" in source:
        return True
    for match in _ASYNC_DEF.finditer(source):
        start = match.start()
        if start == 0 or not _is_word_char(source[start - 1]):
            return True
    return False


def _is_word_char(char: str) -> bool:
    """Whether ``char`` is a word character: what a str pattern's backslash-w matches."""
    return char.isalnum() or char == "_"


def lint_source(
    source: str, filename: str = "<unknown>", options: LintOptions | None = None
) -> list[Finding]:
    """Every finding in ``source``, sorted by position.

    The cyclic garbage collector is paused while the file is linted: a parse allocates a few
    thousand tree nodes per 10 kB of source, all freed by reference counting (a libcst tree has
    no cycles), and with the collector on those allocations trigger collections that walk every
    live node again (10 % of a cold run, for no garbage). It is switched back on here, once the
    tree is gone, so the first collection after it has only the findings left to look at.
    """
    if not might_have_findings(source):
        return []
    paused = gc.isenabled()
    gc.disable()
    try:
        return _parse_and_lint(source, filename, options or LintOptions())
    finally:
        if paused:
            gc.enable()


def _parse_and_lint(source: str, filename: str, options: LintOptions) -> list[Finding]:
    cst = import_libcst()  # deferred: see the module docstring

    try:
        module = parse_unvalidated(source)
    except cst.ParserSyntaxError as exc:
        return [
            Finding(
                NOT_LINTED,
                f"could not parse {filename}: {exc.message} (line {exc.raw_line}); fix the syntax error",
                exc.raw_line,
                max(exc.raw_column, 0),
            )
        ]
    return lint_module(module, options)


def parse_unvalidated(source: str) -> cst.Module:
    """``libcst.parse_module`` without re-validating every node the parser builds.

    Each node's ``__post_init__`` runs ``_validate`` (the checks that guard hand-built trees:
    parentheses, required whitespace, parameter order); on a parse that is a third of the parse
    time, and libcst's native parser has already rejected every source that would fail them
    (a failing check during a parse is reported as a syntax error, and no source tried here
    reaches one the parser accepted). The hook is switched off for this call only, so trees that
    the autofixer or other code builds are still validated.
    """
    import libcst as cst
    from libcst._nodes.base import CSTNode

    hook = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = hook  # type: ignore[method-assign]


def _no_validation(self: object) -> None:
    return None


@dataclass
class _Candidate:
    code: str
    node: cst.CSTNode
    hit: Hit


class _Collector:
    """Receives every hit; keeps, per node, the ones a later pass chooses from."""

    def __init__(self, options: LintOptions) -> None:
        self.options = options
        self.by_node: dict[int, list[_Candidate]] = {}

    def add(self, code: str, node: cst.CSTNode, hit: Hit) -> None:
        from areal_lint.rules import RULES_BY_CODE

        if RULES_BY_CODE[code].opt_in and code not in self.options.enable:
            return  # an opt-in rule that is off claims nothing
        self.by_node.setdefault(id(node), []).append(_Candidate(code, node, hit))

    def kept(self) -> list[_Candidate]:
        """One finding per node: the winner among the codes reported on it."""
        out = []
        for candidates in self.by_node.values():
            if len(candidates) == 1:
                out.append(candidates[0])
                continue
            best = winner(c.code for c in candidates)
            out.append(next(c for c in candidates if c.code == best))
        return out


def lint_module(module: cst.Module, options: LintOptions) -> list[Finding]:
    """Findings for a parsed module; each keeps its node so ``--fix`` can rewrite it."""
    from areal_lint.context import LintContext
    from areal_lint.index import build_index
    from areal_lint.positions import positions_of
    from areal_lint.rules import FAMILIES, RULES_BY_CODE
    from areal_lint.walk import walk

    ctx = LintContext(build_index(module, options), options)
    collector = _Collector(options)
    families = [family(ctx, collector) for family in FAMILIES]
    walk(module, ctx, *(visitor for family in families for visitor in family.visitors()))
    kept = collector.kept()
    if not kept:
        return []
    positions = positions_of(module, (c.node for c in kept))
    findings = []
    for c in kept:
        rule = RULES_BY_CODE[c.code]
        hit = c.hit
        (line, col), (end_line, end_col) = positions[id(c.node)]
        findings.append(
            Finding(
                c.code,
                rule.render(**hit.args),
                line,
                col,
                end_line,
                end_col,
                fix=rule.fix if hit.rewrite is not None else None,
                node=c.node,
                rewrite=hit.rewrite,
                fix_node=hit.fix_node,
                needs=hit.needs,
            )
        )
    findings.sort(key=lambda f: (f.line, f.col, f.code))
    return findings
