# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``import_from_string``: ``"package.module.Name"`` -> the object ``Name``.

Same split (at the last dot), exception types and messages as AReaL, so code that catches
``AttributeError`` for a missing name, or matches the messages, behaves the same after porting.
The ``pkg.mod:Name`` and ``path/to/file.py:Name`` forms of the command line live in
``areal_runtime.infra.workflow_resolution.load_object``, not here.
"""

from __future__ import annotations

import importlib
from typing import Any


def import_from_string(module_path: str) -> Any:
    """Import ``module_path``'s module and return its last dotted component.

    Raises ``ValueError`` for a non-string, empty or dotless path, ``ImportError`` when the
    module does not import, ``AttributeError`` when the module lacks the name.
    """
    if not isinstance(module_path, str) or not module_path:
        raise ValueError(
            f"Invalid module path: {module_path!r}. "
            "Expected a non-empty string like 'module.path.ObjectName'."
        )
    if "." not in module_path:
        raise ValueError(
            f"Invalid module path: {module_path!r}. "
            "Expected format 'module.path.ObjectName', got 1 part(s)."
        )
    module_name, object_name = module_path.rsplit(".", 1)
    try:
        # Looked up on importlib at call time so tests can patch importlib.import_module.
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"Failed to import module '{module_name}' from path '{module_path}': {exc}"
        ) from exc
    try:
        return getattr(module, object_name)
    except AttributeError as exc:
        raise AttributeError(f"Module '{module_name}' has no attribute '{object_name}'.") from exc
