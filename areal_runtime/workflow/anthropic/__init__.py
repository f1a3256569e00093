# SPDX-License-Identifier: Apache-2.0
"""AReaL's Anthropic agent workflows (``areal.workflow.anthropic``), loaded on first use.

Importing the package needs no agent SDK; naming an agent imports its module (and its SDK).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY_IMPORTS = {
    "MathToolAgent": "areal_runtime.workflow.anthropic.claude_math_agent",
}
__all__ = sorted(_LAZY_IMPORTS)


def __getattr__(name: str) -> Any:
    if name not in _LAZY_IMPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY_IMPORTS[name]), name)
    globals()[name] = value
    return value
