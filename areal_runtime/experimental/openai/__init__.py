# SPDX-License-Identifier: Apache-2.0
"""Agent-workflow support (AReaL's ``areal.experimental.openai``).

``ArealOpenAI`` loads lazily: it pulls in ``openai``, ``httpx`` and ``starlette``.
"""

from areal_runtime.experimental.openai.cache import InteractionCache
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward
from areal_runtime.utils.lazy_exports import lazy_exports

__all__ = ["ArealOpenAI", "InteractionCache", "InteractionWithTokenLogpReward"]


__getattr__, __dir__ = lazy_exports(__name__, {"ArealOpenAI": ".client"})
