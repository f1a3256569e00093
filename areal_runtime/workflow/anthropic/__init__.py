# SPDX-License-Identifier: Apache-2.0
"""AReaL's Anthropic-SDK agent workflows (``areal.workflow.anthropic``), loaded on first use.

``MathAgent`` (Messages API) and ``MathToolAgent`` (Claude Code through the Claude Agent SDK,
``claude_math_agent``); lazy, so using one does not import the other's SDK.
"""

from __future__ import annotations

from areal_runtime.utils.lazy_exports import lazy_exports

__all__ = ["MathAgent", "MathToolAgent"]

_LAZY_IMPORTS = {
    "MathAgent": "areal_runtime.workflow.anthropic.math_agent",
    "MathToolAgent": "areal_runtime.workflow.anthropic.claude_math_agent",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_IMPORTS)
