# SPDX-License-Identifier: Apache-2.0
"""Import libcst with the methods ``dataclasses`` writes for its node classes compiled once.

Why: linting one file in a fresh process (the pre-commit case) pays for importing libcst, and
half of that import is ``dataclasses`` compiling the source text it generates for about 200
frozen node classes (``__init__``, ``__eq__``, ``__repr__``...: some 600 texts, the same on
every run). While libcst is imported, ``dataclasses``' own ``exec`` is pointed at one that
looks the text up in a table of code objects compiled on an earlier run, as CPython keeps a
module's byte-code in ``__pycache__``; the table lives there too, tagged with the interpreter's
magic number. A code object compiled from the same text is the code ``exec`` would have run,
so the classes are the same; a table that is missing, stale or unreadable only costs the
compile, and it is not written when Python is told not to write byte-code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any


def default_table_path() -> Path:
    """Where CPython would put this module's byte-code (``PYTHONPYCACHEPREFIX`` honoured)."""
    here = Path(__file__).resolve().parent
    name = f"libcst_dataclasses.{sys.implementation.cache_tag}.bin"
    if sys.pycache_prefix:
        return Path(sys.pycache_prefix) / here.relative_to(here.anchor) / name
    return here / "__pycache__" / name


def import_libcst(table_path: Path | None = None) -> ModuleType:
    """``import libcst``, reusing the compiled dataclass methods of an earlier run."""
    if "libcst" in sys.modules:
        return sys.modules["libcst"]
    if hasattr(dataclasses, "exec"):  # someone else has patched it: leave theirs alone
        import libcst

        return libcst
    path = table_path or default_table_path()
    table = _CodeTable(_read(path))
    dataclasses.exec = table.exec  # type: ignore[attr-defined]  # shadows the builtin there
    try:
        import libcst
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
    if table.compiled and not sys.dont_write_bytecode:
        _write(path, table.to_keep())
    return libcst


class _CodeTable:
    """``exec`` for source text, compiling each distinct text only when no earlier run did."""

    def __init__(self, known: dict[str, CodeType]) -> None:
        self.known = known
        self.used: dict[str, CodeType] = {}  # the texts this import ran
        self.compiled = 0

    def to_keep(self) -> dict[str, CodeType]:
        """What this import ran plus what earlier ones did (a program that imported one of
        libcst's dependencies first runs fewer texts: each would otherwise rewrite the other's
        table), unless the old entries outnumber the new: libcst was upgraded."""
        if len(self.known) > 2 * len(self.used):
            return self.used
        return {**self.known, **self.used}

    def exec(self, source: Any, globals: dict | None = None, locals: dict | None = None) -> None:
        if isinstance(source, str):
            code = self.known.get(source)
            if code is None:
                code = compile(source, "<string>", "exec")
                self.compiled += 1
            self.used[source] = code
            source = code
        exec(source, globals, locals)


def _read(path: Path) -> dict[str, CodeType]:
    try:
        data = path.read_bytes()
        if data[: len(MAGIC_NUMBER)] != MAGIC_NUMBER:
            return {}
        table = marshal.loads(data[len(MAGIC_NUMBER) :])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _write(path: Path, table: dict[str, CodeType]) -> None:
    """Whole or not at all (a temporary file renamed into place); a read-only install skips it."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(MAGIC_NUMBER + marshal.dumps(table))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
