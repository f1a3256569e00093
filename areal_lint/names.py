# SPDX-License-Identifier: Apache-2.0
"""Name resolution without libcst's scope providers (they triple the cost).

An import table maps local names to dotted paths (``import time as t`` -> ``t`` = ``time``;
``from subprocess import run as sh`` -> ``sh`` = ``subprocess.run``). Function-local imports
live in the function's own table, and names bound as parameters or locals shadow globals.
"""

from __future__ import annotations

import re

import libcst as cst

BUILTINS = {"open", "print", "input", "float", "int", "str", "bool", "len", "repr", "round", "abs",
            "sum", "max", "min"}  # fmt: skip


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def module_name(node: cst.BaseExpression | None) -> str:
    return dotted(node) or "" if node is not None else ""


def imports_of(node: cst.Import | cst.ImportFrom) -> dict[str, str]:
    """Local name -> dotted path bound by one import statement."""
    table: dict[str, str] = {}
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = module_name(alias.name)
            if alias.asname is not None:
                table[alias.asname.name.value] = full  # type: ignore[union-attr]
            else:
                root = full.split(".")[0]
                table[root] = root
        return table
    base = "." * len(node.relative) + module_name(node.module)
    if isinstance(node.names, cst.ImportStar):
        return table
    for alias in node.names:
        name = module_name(alias.name)
        local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
        table[local] = f"{base}.{name}" if base else name
    return table


def matches(qualname: str | None, *candidates: str) -> bool:
    """Whether ``qualname`` is one of ``candidates``, tolerant of re-exports.

    A bare candidate (``AsyncRewardWrapper``) matches any module path ending in it, so
    ``areal.api.AsyncRewardWrapper`` and ``areal_runtime.api.reward_api.AsyncRewardWrapper``
    both match; a dotted candidate (``time.sleep``) must match exactly.
    """
    if qualname is None:
        return False
    for candidate in candidates:
        if qualname == candidate:
            return True
        if "." not in candidate and qualname.endswith("." + candidate):
            return True
    return False


def last(qualname: str | None) -> str:
    return qualname.rsplit(".", 1)[-1] if qualname else ""


def self_attr(node: cst.BaseExpression | None) -> str | None:
    """``"x"`` for ``self.x``, else None."""
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        return node.attr.value
    return None


_OPTIONAL = ("Optional", "Annotated", "Union", "Final", "ClassVar")
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")


def annotation_name(node: cst.BaseExpression | None) -> str | None:
    """The dotted type an annotation names, seen through ``Optional``/``| None``/quotes.

    ``httpx.Client`` for ``httpx.Client``, ``Optional[httpx.Client]``, ``httpx.Client | None``
    or ``"httpx.Client"``; ``typing.IO`` for ``typing.IO[str]``; None when it names no one type.
    """
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        parts = [p.strip() for p in text.split("|")] if isinstance(text, str) else []
        parts = [p for p in parts if p != "None"]
        if len(parts) == 1 and _DOTTED.fullmatch(parts[0]):
            return parts[0]
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        left, right = annotation_name(node.left), annotation_name(node.right)
        if left == "None":
            return right
        return left if right == "None" else None
    if isinstance(node, cst.Subscript):
        base = dotted(node.value)
        if base is not None and base.rsplit(".", 1)[-1] in _OPTIONAL:
            names = [
                annotation_name(element.slice.value)
                for element in node.slice
                if isinstance(element.slice, cst.Index)
            ]
            if base.rsplit(".", 1)[-1] == "Annotated":
                names = names[:1]  # Annotated[T, metadata...]
            names = [n for n in names if n != "None"]
            # Union[threading.Event, asyncio.Event] names no one type (camel's ChatAgent)
            return names[0] if len(names) == 1 else None
        return base
    return dotted(node) if node is not None else None
