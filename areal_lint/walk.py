# SPDX-License-Identifier: Apache-2.0
"""A fast read-only walk over a libcst tree, calling ``visit_<Node>``/``leave_<Node>`` methods.

Why: ``Module.visit`` rebuilds every node's children through ``_visit_and_replace_children``
even for read-only visitors, which made it the bulk of the linter's time. This walk reads the
dataclass fields directly, skips whitespace/punctuation fields, and caches per node type which
fields hold children and which hooks the visitor has. Children are visited in source order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst

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


class Walker:
    """Walks ``node`` for ``visitor``; a ``visit_X`` returning False skips X's children."""

    def __init__(self, visitor: Any) -> None:
        self.visitor = visitor
        self._hooks: dict[type, tuple[Any, Any]] = {}

    def _hooks_for(self, cls: type) -> tuple[Any, Any]:
        hooks = self._hooks.get(cls)
        if hooks is None:
            name = cls.__name__
            hooks = (
                getattr(self.visitor, f"visit_{name}", None),
                getattr(self.visitor, f"leave_{name}", None),
            )
            self._hooks[cls] = hooks
        return hooks

    def walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        visit, leave = self._hooks_for(cls)
        if visit is not None and visit(node) is False:
            return
        for name in _child_fields(cls):
            value = getattr(node, name)
            kind = _kind(type(value))
            if kind is _NODE:
                self.walk(value)
            elif kind is _SEQUENCE:
                for item in value:
                    if _kind(type(item)) is _NODE:
                        self.walk(item)
        if leave is not None:
            leave(node)


def walk(node: cst.CSTNode, visitor: Any) -> None:
    Walker(visitor).walk(node)
