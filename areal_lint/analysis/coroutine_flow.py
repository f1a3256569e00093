# SPDX-License-Identifier: Apache-2.0
"""Where an un-awaited coroutine goes inside one function: the facts ARL201/202/203/402 judge.

A coroutine is followed from the call that makes it through assignments (``reward = ...``,
``r = reward``), containers (``[reward]``, ``{"r": reward}``, ``dict(r=reward)``, comprehensions,
``out["r"] = reward``, ``items.append(reward)``), ``return`` and the arguments of calls. It is
the bug when it is read as a value (an operand, an attribute, an f-string, a test), reaches a
call that reads its value (``float``, ``torch.tensor``, ``json.dumps``...), or is returned from
an episode or as a reward-wrapper call (the caller's ``await`` gives it back un-run), directly or
inside a container.
Handed to any other call (``asyncio.gather``, ``create_task``, a helper) it may be awaited
there, so it is not reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import libcst as cst

from areal_lint.context import CONSUMERS, LintContext

# Calls that build a container from their arguments: the container holds the coroutine.
CONTAINER_CALLS = {"dict", "list", "tuple", "set"}
# Consumers that read a container's size, not its elements.
SIZE_ONLY = {"builtins.len", "builtins.bool"}
# Methods that put their argument into the container they are called on.
CONTAINER_METHODS = {"append", "extend", "add", "insert", "appendleft", "setdefault"}


class Use(Enum):
    STATEMENT = "a whole statement"
    DISCARDED = "assigned to _"
    VALUE = "read as a value where it is made"
    READ = "stored, then read as a value (or returned) before any await"
    UNUSED = "stored and never used"


@dataclass(frozen=True)
class Coroutine:
    """An un-awaited coroutine call and how it is used."""

    call: cst.Call
    name: str  # the callee, printable
    use: Use
    node: cst.CSTNode  # where the use shows: the call, or the name that reads it
    target: str | None = None  # the local it was stored in


@dataclass
class _Stored:
    call: cst.Call
    name: str
    target_id: int  # the Name node it was bound at (not a use)
    holds: bool = False  # a container holding the coroutine: its attributes are not the bug
    used: bool = False


# Where an expression's value goes, recorded on the way down (a parent is visited first).
_ELEMENT, _RETURN, _CONSUME, _BIND = "element", "return", "consume", "bind"


class CoroutineTracker:
    """Follows un-awaited coroutine calls of one kind to their use; its own visitor.

    ``name_of`` picks the calls (any coroutine, or only reward-wrapper calls) and names them;
    ``on_use`` receives each use. Locals holding a coroutine, or a container with one, are
    tracked per function (and per lambda, another scope) until awaited, read, rebound or the end.
    """

    def __init__(
        self,
        ctx: LintContext,
        name_of: Callable[[LintContext, cst.Call], str | None],
        on_use: Callable[[Coroutine], None],
        returns_are_uses: bool = False,
    ) -> None:
        self.ctx = ctx
        self.returns_are_uses = returns_are_uses
        self.name_of = name_of
        self.on_use = on_use
        self.stored: list[dict[str, _Stored]] = [{}]
        self.slot: dict[int, tuple[str, object]] = {}
        self.not_a_use: set[int] = set()  # attribute and keyword names: not a local's use
        self._container_names: set[int] = set()  # `out` in `out["r"] = x`, `items.append(x)`

    # ---- scopes -------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stored.append({})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        for target, entry in self.stored.pop().items():
            if not entry.used and not target.startswith("_"):
                self.on_use(Coroutine(entry.call, entry.name, Use.UNUSED, entry.call, target))

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.stored.append({})

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.stored.pop()

    # ---- where values go ------------------------------------------------------------------
    def _elements(self, container: cst.CSTNode, values: list[cst.BaseExpression]) -> None:
        for value in values:
            self.slot[id(value)] = (_ELEMENT, container)

    def visit_List(self, node: cst.List) -> None:
        self._elements(node, [e.value for e in node.elements])

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._elements(node, [e.value for e in node.elements])

    def visit_Set(self, node: cst.Set) -> None:
        self._elements(node, [e.value for e in node.elements])

    def visit_Dict(self, node: cst.Dict) -> None:
        self._elements(node, [e.value for e in node.elements if isinstance(e, cst.DictElement)])

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._elements(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._elements(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._elements(node, [node.value])

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._elements(node, [node.body, node.orelse])

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self.ctx.frame.is_async:
            self.slot[id(node.value)] = (_RETURN, None)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_a_use.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_a_use.add(id(node.keyword))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.slot[id(node.target)] = (_CONSUME, None)  # reward *= discount reads reward

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Name):
            self.stored[-1].pop(target.value, None)  # rebound; the value may store it again
            self.slot[id(node.value)] = (_BIND, target)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.slot[id(node.value)] = (_BIND, target.value)  # out["r"] = reward

    def _mark_arguments(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in CONTAINER_CALLS:
            if func.value not in self.ctx.frame.locals:
                self._elements(node, [arg.value for arg in node.args])
        elif (qualname := self.ctx.qualname(node)) in CONSUMERS:
            for arg in node.args:
                self.slot[id(arg.value)] = (_CONSUME, qualname)
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value in CONTAINER_METHODS
            and isinstance(func.value, cst.Name)
        ):
            self._container_names.add(id(func.value))
            for arg in node.args:
                self.slot[id(arg.value)] = (_BIND, func.value)

    def _fate(self, node: cst.CSTNode) -> tuple[str | None, object]:
        """Where ``node``'s value ends: through containers to a return, a consumer, a bind."""
        current: object = node
        while True:
            kind, extra = self.slot.get(id(current), (None, None))
            if kind != _ELEMENT:
                return kind, extra
            current = extra

    # ---- coroutines -----------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        self._mark_arguments(node)
        if not ctx.frame.is_async or ctx.is_awaited(node):
            return
        if ctx.is_statement(node):
            use = Use.STATEMENT
        elif ctx.is_discarded(node):
            use = Use.DISCARDED
        elif ctx.is_value(node):
            use = Use.VALUE
        else:
            kind, extra = self._fate(node)
            if (kind == _RETURN and self._returns_are_uses()) or kind == _CONSUME:
                use = Use.VALUE
            elif kind == _BIND and isinstance(extra, cst.Name):
                name = self.name_of(ctx, node)
                if name is not None and not extra.value.startswith("_"):  # `_x = ` discards
                    holds = id(node) in self.slot and self.slot[id(node)][0] == _ELEMENT
                    holds = holds or self._binds_into(node, extra)
                    self.stored[-1][extra.value] = _Stored(node, name, id(extra), holds)
                return
            else:
                return
        name = self.name_of(ctx, node)
        if name is not None:
            self.on_use(Coroutine(node, name, use, node))

    def visit_Name(self, node: cst.Name) -> None:
        stored = self.stored[-1]
        entry = stored.get(node.value)
        if entry is None or entry.target_id == id(node) or id(node) in self.not_a_use:
            return
        entry.used = True
        if self.ctx.is_awaited(node):
            stored.pop(node.value)
            return
        kind, extra = self._fate(node)
        if entry.holds and kind == _CONSUME and extra in SIZE_ONLY:
            return  # len(tasks) counts the coroutines without reading them
        if (
            (kind == _RETURN and self._returns_are_uses())
            or kind == _CONSUME
            or (self.ctx.is_value(node) and not entry.holds)
        ):
            stored.pop(node.value)
            self.on_use(Coroutine(entry.call, entry.name, Use.READ, node, node.value))
        elif (
            kind == _BIND
            and isinstance(extra, cst.Name)
            and extra.value != node.value
            and not extra.value.startswith("_")
        ):  # an alias, or a container that now holds it
            holds = entry.holds or self.slot.get(id(node), ("",))[0] == _ELEMENT
            holds = holds or self._binds_into(node, extra)
            stored[extra.value] = _Stored(entry.call, entry.name, id(extra), holds)

    def _returns_are_uses(self) -> bool:
        """Returning a coroutine from an ``async def`` is a bug for a reward-wrapper call and in
        an episode (the runtime awaits the episode and gets a coroutine as its result); other
        async functions may hand one back on purpose (litellm's ``route_request`` does, for a
        ``create_task`` later)."""
        return self.returns_are_uses or self.ctx.frame.is_episode

    def _binds_into(self, node: cst.CSTNode, name: cst.Name) -> bool:
        """``out["r"] = x`` or ``items.append(x)``: ``name`` is a container, not ``x`` itself."""
        return self.slot.get(id(node)) == (_BIND, name) and id(name) in self._container_names

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name):
            self._container_names.add(id(node.value))
