# SPDX-License-Identifier: Apache-2.0
"""A package's re-exports, imported on first access (PEP 562).

Why: AReaL's packages re-export classes (``from areal.api import RolloutWorkflow``) whose
modules pull torch, an agent SDK or the proxy server; importing the package must stay cheap.
Every lazy ``__init__`` of the runtime builds its ``__getattr__``/``__dir__`` here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to its module.

    A module path starting with ``.`` is relative to ``package``. The first access binds the
    name in the package, so later ones cost a dict lookup.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
