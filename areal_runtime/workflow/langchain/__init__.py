# SPDX-License-Identifier: Apache-2.0
"""AReaL's LangChain agent workflows (``areal.workflow.langchain``), loaded on first use."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MathAgent", "MathToolAgent"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("areal_runtime.workflow.langchain.math_agent"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
