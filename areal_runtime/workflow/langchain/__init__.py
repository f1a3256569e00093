# SPDX-License-Identifier: Apache-2.0
"""AReaL's LangChain agent workflows (``areal.workflow.langchain``), loaded on first use."""

from __future__ import annotations

from areal_runtime.utils.lazy_exports import lazy_exports

__all__ = ["MathAgent", "MathToolAgent"]


__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, ".math_agent"))
