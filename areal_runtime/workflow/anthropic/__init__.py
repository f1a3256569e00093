# SPDX-License-Identifier: Apache-2.0
"""AReaL's Anthropic-SDK agent workflows (``areal.workflow.anthropic``), loaded on first use.

``MathAgent`` (Messages API) and ``MathToolAgent`` (Claude Code through the Claude Agent SDK,
``claude_math_agent``); lazy, so using one does not import the other's SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MathAgent", "MathToolAgent"]

_LAZY_IMPORTS = {
    "MathAgent": "areal_runtime.workflow.anthropic.math_agent",
    "MathToolAgent": "areal_runtime.workflow.anthropic.claude_math_agent",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_IMPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY_IMPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
