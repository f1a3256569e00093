# SPDX-License-Identifier: Apache-2.0
"""A fast read-only walk over a libcst tree that feeds each node to several visitors.

Why: ``Module.visit`` rebuilds every node's children through ``_visit_and_replace_children``
even for read-only visitors, which made it the bulk of the linter's time (and libcst's own
visit measured twice as slow as this walk). This walk reads the dataclass fields directly,
skips whitespace/punctuation fields, and caches per node type which fields hold children and
which ``visit_<Node>``/``leave_<Node>`` methods the visitors have, so dispatching a node costs a
dictionary look-up, never a ``hasattr`` per visitor. Children are visited in source order;
``visit`` hooks run in the order the visitors were given, ``leave`` hooks in reverse, so the
first visitor (the shared scope context) enters a node first and leaves it last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import libcst as cst

Hook = Callable[[Any], object]

_SKIP = {
    "whitespace_before", "whitespace_after", "lpar", "rpar", "comma", "leading_lines",
    "lines_after_decorators", "header", "footer", "semicolon", "whitespace_before_colon",
    "whitespace_after_colon", "whitespace_before_params", "whitespace_after_def",
    "whitespace_after_async", "whitespace_after_await", "whitespace_before_args",
    "whitespace_after_func", "whitespace_after_star", "whitespace_after_arg",
    "whitespace_after_indicator", "whitespace_before_indicator", "whitespace_after_name",
    "whitespace_after_class", "whitespace_before_value", "whitespace_after_cases",
    "lbracket", "rbracket", "lbrace", "rbrace", "dot", "star", "colon", "equal",
    "trailing_whitespace", "first_line", "empty_lines", "indent", "newline", "asynchronous",
}  # fmt: skip
_fields_cache: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _fields_cache.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _SKIP)
        _fields_cache[cls] = names
    return names


_NODE, _SEQUENCE, _OTHER = "node", "sequence", "other"
_kinds: dict[type, str] = {tuple: _SEQUENCE, list: _SEQUENCE}


def _kind(cls: type) -> str:
    """Cached by type: ``isinstance(x, CSTNode)`` goes through ABC machinery, slow per node."""
    kind = _kinds.get(cls)
    if kind is None:
        kind = _NODE if issubclass(cls, cst.CSTNode) else _OTHER
        _kinds[cls] = kind
    return kind


_has_hook: dict[tuple[type, str], bool] = {}


def _hook(visitor: Any, name: str) -> Hook | None:
    """``visitor.<name>``, unless absent or one of ``CSTVisitor``'s empty stubs."""
    key = (type(visitor), name)
    has = _has_hook.get(key)
    if has is None:
        method = getattr(type(visitor), name, None)
        has = method is not None and not getattr(method, "_is_no_op", False)
        _has_hook[key] = has
    return getattr(visitor, name) if has else None


def _chain(hooks: list[Hook]) -> Hook | None:
    """One callable for the hooks of a node type: None, the hook itself, or a loop over them."""
    if not hooks:
        return None
    if len(hooks) == 1:
        return hooks[0]
    hooks_tuple = tuple(hooks)

    def chained(node: Any) -> None:
        for hook in hooks_tuple:
            hook(node)

    return chained


_Plan = tuple["Hook | None", "Hook | None", tuple[str, ...]]


def _plan(visitors: tuple[Any, ...], plans: dict[type, _Plan], cls: type) -> _Plan:
    """A node type's ``visit`` hooks, ``leave`` hooks and child fields, cached in ``plans``."""
    name = cls.__name__
    visits = [h for v in visitors if (h := _hook(v, f"visit_{name}")) is not None]
    leaves = [h for v in reversed(visitors) if (h := _hook(v, f"leave_{name}")) is not None]
    plan = (_chain(visits), _chain(leaves), _child_fields(cls))
    plans[cls] = plan
    return plan


class Walker:
    """Walks a tree once, handing each node to every visitor with a hook for its type.

    Per node type, one dictionary look-up gives its ``visit`` and ``leave`` hooks and the fields
    that may hold children; whether a field's value is a node is one more look-up by the value's
    type (the walk is a quarter of a cold run's CPU, so it makes no other call per node).
    """

    def __init__(self, *visitors: Any) -> None:
        self.visitors = visitors
        self._plans: dict[type, _Plan] = {}

    def walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        plan = self._plans.get(cls)
        if plan is None:
            plan = _plan(self.visitors, self._plans, cls)
        visit, leave, fields = plan
        if visit is not None:
            visit(node)
        for name in fields:
            value = getattr(node, name)
            kind = _kinds.get(type(value)) or _kind(type(value))
            if kind is _NODE:
                self.walk(value)
            elif kind is _SEQUENCE:
                for item in value:
                    if (_kinds.get(type(item)) or _kind(type(item))) is _NODE:
                        self.walk(item)
        if leave is not None:
            leave(node)


def walk(node: cst.CSTNode, *visitors: Any) -> None:
    """Walk ``node`` once for all ``visitors``."""
    Walker(*visitors).walk(node)
