# SPDX-License-Identifier: Apache-2.0
"""AReaL's LangChain math agents (``areal.workflow.langchain.math_agent``).

- ``MathAgent``: one ``ChatOpenAI.ainvoke`` on the row's ``messages``.
- ``MathToolAgent``: LangChain's ``create_agent`` with six calculator tools (``add``,
  ``subtract``, ``multiply``, ``divide``, ``power(base, exponent)``, ``sqrt(n)``).

Both read ``temperature`` (default 1.0), ``top_p`` (1.0) and ``max_completion_tokens`` (1024,
sent as ``max_tokens``) from their keywords, as AReaL's do, and return the reward of the final
message's text.
"""

from __future__ import annotations

from typing import Any

from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.utils.calculator import CALCULATOR, plain_function
from areal_runtime.workflow._agent_client import client_settings, missing_sdk
from areal_runtime.workflow._math_reward import math_reward_fn

try:
    from langchain.agents import create_agent
    from langchain.tools import tool
    from langchain_openai import ChatOpenAI
except ModuleNotFoundError as exc:
    raise missing_sdk(exc) from exc

__all__ = [
    "CALCULATOR_TOOLS",
    "MathAgent",
    "MathToolAgent",
    "add",
    "divide",
    "math_reward_fn",
    "multiply",
    "power",
    "sqrt",
    "subtract",
]

TOOL_AGENT_SYSTEM_PROMPT = (
    "You are a math assistant with a calculator: add, subtract, multiply, divide, power and "
    "sqrt. Do every calculation with these tools, never in your head, reasoning step by step, "
    "and give the final answer when the calculations are done."
)


CALCULATOR_TOOLS = [tool(plain_function(t, "langchain", __name__)) for t in CALCULATOR]
add, subtract, multiply, divide, power, sqrt = CALCULATOR_TOOLS


def _chat_model(kwargs: dict[str, Any], extra_kwargs: dict[str, Any]) -> ChatOpenAI:
    settings = client_settings(extra_kwargs, "OPENAI")
    return ChatOpenAI(
        model="default",
        base_url=settings.base_url,
        api_key=settings.api_key,
        temperature=kwargs.get("temperature", 1.0),
        top_p=kwargs.get("top_p", 1.0),
        max_tokens=kwargs.get("max_completion_tokens", 1024),
        http_async_client=settings.http_client,
    )


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    return content if isinstance(content, str) else str(content or "")


class MathAgent:
    """One ``ChatOpenAI`` call per episode, scored by ``math_reward_fn``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs.copy()
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        response = await _chat_model(self.kwargs, extra_kwargs).ainvoke(data["messages"])
        return await self._reward_fn(completions=_text(response), answer=data["answer"])


class MathToolAgent:
    """LangChain's ``create_agent`` with the calculator; the last message's reward."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs.copy()
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        agent = create_agent(
            model=_chat_model(self.kwargs, extra_kwargs),
            tools=CALCULATOR_TOOLS,
            system_prompt=TOOL_AGENT_SYSTEM_PROMPT,
        )
        question = data["messages"][-1]["content"]
        result = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
        return await self._reward_fn(
            completions=_text(result["messages"][-1]), answer=data["answer"]
        )
