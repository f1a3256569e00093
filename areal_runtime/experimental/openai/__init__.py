# SPDX-License-Identifier: Apache-2.0
"""Agent-workflow support (AReaL's ``areal.experimental.openai``).

``ArealOpenAI`` loads lazily: it pulls in ``openai``, ``httpx`` and ``starlette``.
"""

from typing import Any

from areal_runtime.experimental.openai.cache import InteractionCache
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward

__all__ = ["ArealOpenAI", "InteractionCache", "InteractionWithTokenLogpReward"]


def __getattr__(name: str) -> Any:
    if name == "ArealOpenAI":
        from areal_runtime.experimental.openai.client import ArealOpenAI

        return ArealOpenAI
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
