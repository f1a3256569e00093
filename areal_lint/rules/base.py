# SPDX-License-Identifier: Apache-2.0
"""What every rule declares, and how a family's check functions report through the runner.

A rule is a class with its code, one-line message, autofix kind and documentation. Each code has
exactly one check function, tagged with ``@check(CODE)``: it answers "does this node break the
rule?" with a ``Hit`` (the message arguments and, where there is one, the fix) or None. The
family visitor decides which nodes to show it; the code on the finding is always the tag, so a
code can only be reported by the check that owns it, in the module that declares it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.finding import FixKind


class Rule:
    """Base of all rules; subclasses set the class attributes and a What/Why/Example/Fix docstring."""

    code: ClassVar[str]
    message: ClassVar[str]  # str.format template; says what is wrong and what to do instead
    fix: ClassVar[FixKind | None] = None
    opt_in: ClassVar[bool] = False
    # Codes this rule may also report on a construct another finding already covers (the
    # call that made a value, or a call nested in this one) -> why that needs a second fix.
    # Everything else is one finding per defect (tests/areal_lint/test_one_finding_per_defect.py).
    also_with: ClassVar[dict[str, str]] = {}

    @classmethod
    def render(cls, **kwargs: object) -> str:
        return cls.message.format(**kwargs)


@dataclass(frozen=True)
class Hit:
    """A check's verdict: the message arguments, and where and how to report and fix it."""

    args: dict[str, str] = field(default_factory=dict)
    node: cst.CSTNode | None = None  # where to report; None: the node that was checked
    rewrite: Callable[[Any], Any] | None = None  # builds the fixed node (None: no autofix)
    needs: tuple[str, ...] = ()  # modules the fix needs imported
    fix_node: cst.CSTNode | None = None  # the node the fix replaces, when not the reported one


class Reporter(Protocol):
    """Where hits go: the runner collects them and keeps one finding per node."""

    def add(self, code: str, node: cst.CSTNode, hit: Hit) -> None: ...


CheckFn = TypeVar("CheckFn", bound=Callable[..., "Hit | None"])


def check(code: str) -> Callable[[CheckFn], CheckFn]:
    """Tag a function as the one check of ``code``."""

    def tag(fn: CheckFn) -> CheckFn:
        fn.code = code  # type: ignore[attr-defined]
        return fn

    return tag


class FamilyVisitor:
    """One rule family: its own state, fed node by node by the runner's single walk.

    Subclasses define ``visit_<Node>``/``leave_<Node>`` methods for the node types they handle
    and call ``self.run(check_fn, node, ...)`` for each check that applies.
    """

    def __init__(self, ctx: LintContext, reporter: Reporter) -> None:
        self.ctx = ctx
        self.reporter = reporter

    def visitors(self) -> tuple[object, ...]:
        """The objects the walk feeds: this family and any helper visitor it owns."""
        return (self,)

    def run(self, fn: Callable[..., Hit | None], node: cst.CSTNode, *args: Any) -> None:
        """Run one check on ``node`` and report its hit under the check's own code."""
        report(self.ctx, self.reporter, fn, node, *args)


def report(
    ctx: LintContext,
    reporter: Reporter,
    fn: Callable[..., Hit | None],
    node: cst.CSTNode,
    *args: Any,
) -> None:
    """``FamilyVisitor.run`` for a callback that must not hold its family: a helper visitor
    that keeps a bound method of the family that owns it makes a reference cycle, and the
    cycle keeps the file's whole tree alive until the garbage collector finds it."""
    hit = fn(ctx, node, *args)
    if hit is not None:
        reporter.add(fn.code, hit.node if hit.node is not None else node, hit)  # type: ignore[attr-defined]
