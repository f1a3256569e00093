# SPDX-License-Identifier: Apache-2.0
"""Agent-workflow support (AReaL's ``areal.experimental.openai``)."""

from areal_runtime.experimental.openai.cache import InteractionCache
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward

__all__ = ["InteractionCache", "InteractionWithTokenLogpReward"]
