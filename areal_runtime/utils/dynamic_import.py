# SPDX-License-Identifier: Apache-2.0
"""Resolve ``"package.module.attr"`` (or ``"package.module:attr"``) strings to objects."""

from __future__ import annotations

import importlib
from typing import Any


def import_from_string(path: str) -> Any:
    """Import the object named by ``path``; the error says what part was not found."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"expected an import string like 'pkg.module.Name', got {path!r}")
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ValueError(f"import string {path!r} must name a module and an attribute")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(f"cannot import module {module_name!r} from {path!r}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj
