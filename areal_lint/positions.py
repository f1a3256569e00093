# SPDX-License-Identifier: Apache-2.0
"""Source ranges of the few nodes that have findings, from one lean code-generation pass.

Why not ``MetadataWrapper.resolve(PositionProvider)``: it records a range for every node
through a generator context manager and a regex split per token, then runs a second full
(empty) batched visit; that was most of the linter's time on files with findings. This state
keeps libcst's position rules (the syntactic range where a node records one, the
whitespace-inclusive range otherwise, start/end hoisted from child nodes) but stores nothing
for other nodes, and it stops as soon as the last asked-for node is done: code generation runs
in source order, so what follows that node cannot change its range.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState

Position = tuple[int, int]
Range = tuple[Position, Position]
_NEWLINE = re.compile(r"\r\n?|\n")


class _Ignored:
    """``with state.record_syntactic_position(node)`` for a node nobody asked about."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_exc: object) -> None:
        return None


_IGNORED = _Ignored()


class _AllFound(Exception):
    """Raised once every asked-for node has its range: the rest of the module is not needed."""


class _Recorder:
    """``with state.record_syntactic_position(node)`` for a target node."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(self, state: _PositionState, node: Any, start_node: Any, end_node: Any) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node
        # The hoisted child's range is needed to finish this one.
        for child in (start_node, end_node):
            if child is not None:
                state.targets.add(id(child))

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *_exc: object) -> None:
        state = self.state
        start = self.start
        end = (state.line, state.column)
        if self.start_node is not None:
            start = state.computed[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.computed[id(self.end_node)][1]
        state.done(id(self.node), (start, end))


@dataclass
class _PositionState(CodegenState):
    targets: set[int] = field(default_factory=set)
    computed: dict[int, Range] = field(default_factory=dict)
    wanted: set[int] = field(default_factory=set)  # the asked-for nodes not done yet
    line: int = 1
    column: int = 0
    _starts: dict[int, Position] = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)  # Module checks whether anything was written
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._starts[id(node)] = (self.line, self.column)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.targets and key not in self.computed:
            self.done(key, (self._starts[key], (self.line, self.column)))

    def done(self, key: int, span: Range) -> None:
        self.computed[key] = span
        wanted = self.wanted
        if key in wanted:
            wanted.discard(key)
            if not wanted:
                raise _AllFound

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Recorder | _Ignored:
        if id(node) not in self.targets:
            return _IGNORED
        return _Recorder(self, node, start_node, end_node)


def positions_of(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Range]:
    """``id(node) -> ((line, col), (end_line, end_col))`` for ``nodes`` of ``module``.

    Lines are 1-based and columns 0-based; the ranges equal ``PositionProvider``'s.
    """
    nodes = list(nodes)
    state = _PositionState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets={id(node) for node in nodes},
        wanted={id(node) for node in nodes},
    )
    with suppress(_AllFound):
        module._codegen(state)
    missing = [type(node).__name__ for node in nodes if id(node) not in state.computed]
    if missing:
        raise ValueError(f"nodes not part of the module: {', '.join(missing)}")
    return {id(node): state.computed[id(node)] for node in nodes}
