# SPDX-License-Identifier: Apache-2.0
"""AReaL's Anthropic Messages API math agent (``areal.workflow.anthropic.math_agent``).

``MathAgent`` sends the row's ``messages`` (a ``system`` message becomes the ``system``
parameter) to the proxy's ``/v1/messages`` and returns the reward of the reply's text.
Constructor keywords go to ``messages.create``; ``max_tokens`` is required there, so a
MathAgent without it is refused at construction (AReaL's fails in every episode);
``max_completion_tokens`` and ``max_turns`` are dropped, as AReaL does.
"""

from __future__ import annotations

from typing import Any

from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.workflow._agent_client import client_settings, missing_sdk
from areal_runtime.workflow._math_reward import math_reward_fn

try:
    import anthropic
except ModuleNotFoundError as exc:
    raise missing_sdk(exc) from exc

__all__ = ["MathAgent", "math_reward_fn"]


def to_anthropic_messages(messages: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """``(system, messages)``: OpenAI-style messages split as the Messages API wants them.

    The last ``system`` message wins (AReaL's behaviour); without one, ``system`` is
    ``anthropic.NOT_GIVEN`` so the request carries no ``system`` field at all.
    """
    system: Any = anthropic.NOT_GIVEN
    rest = []
    for message in messages:
        if message["role"] == "system":
            system = message["content"] or anthropic.NOT_GIVEN
        else:
            rest.append({"role": message["role"], "content": message["content"]})
    return system, rest


class MathAgent:
    """One Messages API call per episode, scored by ``math_reward_fn``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs.copy()
        self.kwargs.pop("max_completion_tokens", None)
        self.kwargs.pop("max_turns", None)
        if "max_tokens" not in self.kwargs:  # else every episode fails inside the SDK
            raise TypeError(
                "MathAgent needs max_tokens (the Messages API requires it): "
                "MathAgent(max_tokens=512), or --kwargs '{\"max_tokens\": 512}'"
            )
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        settings = client_settings(extra_kwargs, "ANTHROPIC")
        client = anthropic.AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            http_client=settings.http_client,
            max_retries=0,
        )
        system, messages = to_anthropic_messages(data["messages"])
        response = await client.messages.create(
            model="default", messages=messages, system=system, **self.kwargs
        )
        text = "".join(
            block.text for block in response.content if isinstance(block, anthropic.types.TextBlock)
        )
        return await self._reward_fn(text, data["answer"])
