# SPDX-License-Identifier: Apache-2.0
"""Register a new export in a package ``__init__.py`` with libcst, keeping comments and layout.

Two shapes are understood: AReaL's lazy style (an ``__all__`` list plus a ``_LAZY_IMPORTS``
dict, one entry added to each) and the plain eager style (``from .mod import Name`` plus an
``__all__`` entry). Anything else is refused with a message rather than guessed at. Adding a
name that is already registered with the same module changes nothing (idempotent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from areal_devkit.runtime_facade import atomic_write_text


class InitEditError(ValueError):
    """The ``__init__.py`` has a shape the editor will not touch."""


def _string(value: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{value}"')


def _literal_strings(node: cst.BaseExpression) -> list[str] | None:
    if not isinstance(node, cst.List | cst.Tuple):
        return None
    out = []
    for element in node.elements:
        if not isinstance(element.value, cst.SimpleString):
            return None
        out.append(element.value.evaluated_value)
    return out


def _find_assign(module: cst.Module, name: str) -> cst.Assign | None:
    found = None
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign | cst.AugAssign | cst.AnnAssign):
                    targets = (
                        [t.target for t in small.targets]
                        if isinstance(small, cst.Assign)
                        else [small.target]
                    )
                    if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                        if not isinstance(small, cst.Assign) or found is not None:
                            raise InitEditError(
                                f"{name} is assigned more than once or with +=/annotations; "
                                f"keep a single `{name} = [...]` literal so it can be edited safely"
                            )
                        found = small
    return found


def detect_style(source: str) -> str:
    """``lazy`` (``_LAZY_IMPORTS``), ``eager`` (imports + ``__all__``) or ``empty``."""
    module = cst.parse_module(source)
    if _find_assign(module, "_LAZY_IMPORTS") is not None:
        return "lazy"
    if _find_assign(module, "__all__") is not None or any(
        isinstance(s, cst.SimpleStatementLine)
        and any(isinstance(x, cst.ImportFrom) for x in s.body)
        for s in module.body
    ):
        return "eager"
    return "empty"


def exported_names(source: str) -> set[str]:
    module = cst.parse_module(source)
    names: set[str] = set()
    assign = _find_assign(module, "__all__")
    if assign is not None:
        names |= set(_literal_strings(assign.value) or [])
    lazy = _find_assign(module, "_LAZY_IMPORTS")
    if lazy is not None and isinstance(lazy.value, cst.Dict):
        names |= {
            e.key.evaluated_value
            for e in lazy.value.elements
            if isinstance(getattr(e, "key", None), cst.SimpleString)
        }
    return names


def _brackets(collection: cst.List | cst.Tuple | cst.Dict) -> tuple[Any, Any, Any]:
    """``(opener, closer, replace_closer)``; a tuple's brackets are its parentheses."""
    if isinstance(collection, cst.Dict):
        return (
            collection.lbrace,
            collection.rbrace,
            lambda c: collection.with_changes(rbrace=c),
        )
    if isinstance(collection, cst.List):
        return (
            collection.lbracket,
            collection.rbracket,
            lambda c: collection.with_changes(rbracket=c),
        )
    if not collection.lpar:  # a bare tuple: `__all__ = "A", "B"`
        raise InitEditError("__all__ is a tuple without parentheses; write it as a list to edit it")
    return (
        collection.lpar[0],
        collection.rpar[-1],
        lambda c: collection.with_changes(rpar=[*collection.rpar[:-1], c]),
    )


def _append(
    collection: cst.List | cst.Tuple | cst.Dict, new: cst.BaseElement | cst.BaseDictElement
) -> cst.List | cst.Tuple | cst.Dict:
    """``collection`` with ``new`` appended in its own style (one per line or inline)."""
    elements = list(collection.elements)
    if not elements:
        return collection.with_changes(elements=[new])
    last = elements[-1]
    opener, closer, with_closer = _brackets(collection)
    if len(elements) >= 2 and isinstance(elements[0].comma, cst.Comma):
        separator = elements[0].comma.whitespace_after
    elif isinstance(opener.whitespace_after, cst.ParenthesizedWhitespace):
        separator = opener.whitespace_after
    else:
        separator = cst.SimpleWhitespace(" ")
    before_closer = closer.whitespace_before
    if (
        isinstance(last.comma, cst.Comma)
        and isinstance(separator, cst.ParenthesizedWhitespace)
        and isinstance(before_closer, cst.ParenthesizedWhitespace)
    ):
        # One entry a line with a trailing comma. The last entry's comment sits before the
        # closing bracket: it stays with that entry, and the new entry takes a clean line.
        kept = before_closer.with_changes(last_line=separator.last_line, indent=separator.indent)
        clean = before_closer.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
        elements[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=kept))
        elements.append(new.with_changes(comma=cst.Comma()))
        return with_closer(closer.with_changes(whitespace_before=clean)).with_changes(
            elements=elements
        )
    trailing = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else None
    elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator))
    if trailing is not None:
        new = new.with_changes(comma=cst.Comma(whitespace_after=trailing))
    elements.append(new)
    return collection.with_changes(elements=elements)


class _AddEntry(cst.CSTTransformer):
    """Append to the literal assigned to ``target``: a string to a list, a pair to a dict."""

    def __init__(self, target: str, key: str, value: str | None = None) -> None:
        self.target, self.key, self.value = target, key, value

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if not any(
            isinstance(t.target, cst.Name) and t.target.value == self.target
            for t in original_node.targets
        ):
            return updated_node
        literal = updated_node.value
        if self.value is None:
            if not isinstance(literal, cst.List | cst.Tuple) or _literal_strings(literal) is None:
                raise InitEditError(f"{self.target} must be a literal list of strings to be edited")
            new: cst.BaseElement | cst.BaseDictElement = cst.Element(_string(self.key))
        else:
            if not isinstance(literal, cst.Dict):
                raise InitEditError(f"{self.target} must be a literal dict to be edited")
            new = cst.DictElement(_string(self.key), _string(self.value))
        return updated_node.with_changes(value=_append(literal, new))


def register_export(init_path: Path, name: str, module: str) -> bool:
    """Export ``name`` from ``module`` (dotted, absolute) in ``init_path``; True if changed."""
    source = init_path.read_text(encoding="utf-8")
    new_source = with_export(source, name, module, where=str(init_path))
    if new_source == source:
        return False
    atomic_write_text(init_path, new_source)
    return True


def with_export(source: str, name: str, module: str, *, where: str = "__init__.py") -> str:
    """``source`` (a package ``__init__.py``, named ``where`` in errors) exporting ``name`` from
    ``module`` (dotted, absolute); ``source`` itself when it already does. Pure, so a scaffold
    can plan every file before it writes one."""
    style = detect_style(source)
    lazy_map = _find_assign(cst.parse_module(source), "_LAZY_IMPORTS")
    if name in exported_names(source):
        if lazy_map is not None and f'"{name}": "{module}"' not in source.replace("'", '"'):
            raise InitEditError(f"{name} is already exported by {where} from another module")
        return source
    tree = cst.parse_module(source)
    if style == "lazy":
        if _find_assign(tree, "__all__") is None:
            raise InitEditError(
                f"{where} has _LAZY_IMPORTS but no __all__ list; add `__all__ = []`"
            )
        tree = tree.visit(_AddEntry("__all__", name)).visit(
            _AddEntry("_LAZY_IMPORTS", name, module)
        )
    else:
        relative = "." + module.rsplit(".", 1)[-1]
        import_line = cst.parse_statement(f"from {relative} import {name}\n")
        body = list(tree.body)
        position = 0
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(s, cst.ImportFrom | cst.Import) for s in stmt.body
            ):
                position = i + 1
            elif (
                i == 0
                and isinstance(stmt, cst.SimpleStatementLine)
                and isinstance(stmt.body[0], cst.Expr)
            ):
                position = 1
        body.insert(position, import_line)
        tree = tree.with_changes(body=body)
        if _find_assign(tree, "__all__") is not None:
            tree = tree.visit(_AddEntry("__all__", name))
        else:
            tree = tree.with_changes(
                body=[*tree.body, cst.parse_statement(f'__all__ = ["{name}"]\n')]
            )
    return tree.code if tree.code.endswith("\n") else tree.code + "\n"
