# SPDX-License-Identifier: Apache-2.0
"""AReaL's OpenAI-SDK math agents (``areal.workflow.openai.math_agent``).

Same classes, constructors and episodes as AReaL 1.0.4, so a config naming
``areal.workflow.openai.math_agent.MathAgent`` ports by renaming ``areal`` to
``areal_runtime``. Each agent gets ``base_url`` / ``api_key`` / ``http_client`` from the proxy
(or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` in a subprocess) and returns its reward(s):

- ``MathAgent``: one chat completion on the row's ``messages``; returns its reward.
- ``MultiTurnMathAgent``: retries with a feedback message until correct or ``max_turns``;
  returns ``{completion id: reward}``.
- ``MathToolAgent``: an OpenAI Agents SDK agent with six calculator tools (``add``, ...,
  ``sqrt``) over the Responses API; returns the final answer's reward.

Constructor keywords are the SDK's sampling arguments (``temperature``, ``top_p``,
``max_completion_tokens``); ``max_tokens`` and ``max_turns`` are dropped where AReaL drops them
(AReaL's example passes both to every agent).
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI

from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.utils.calculator import CALCULATOR, plain_function
from areal_runtime.workflow._agent_client import client_settings, missing_sdk
from areal_runtime.workflow._math_reward import math_reward_fn

try:
    from agents import Agent, ModelSettings, OpenAIProvider, RunConfig, SQLiteSession, function_tool
    from agents import Runner as OpenAIRunner
except ModuleNotFoundError as exc:
    raise missing_sdk(exc) from exc

__all__ = [
    "MathAgent",
    "MathToolAgent",
    "MultiTurnMathAgent",
    "add",
    "divide",
    "math_reward_fn",
    "multiply",
    "power",
    "sqrt",
    "subtract",
]

RETRY_FEEDBACK = (
    "That answer is wrong, or the reward function could not read a number from it. "
    "Read the question again, look at what went wrong above, and give the answer once more."
)
TOOL_AGENT_NAME = "RLVR Math with Calculator"
TOOL_AGENT_INSTRUCTIONS = (
    "Solve the user's math question with the calculator tools. Do every calculation with a "
    "tool call instead of stating the result yourself."
)


def _client(extra_kwargs: dict[str, Any]) -> AsyncOpenAI:
    """The proxy's client; ``max_retries=0`` so a refused request fails the episode at once."""
    settings = client_settings(extra_kwargs, "OPENAI")
    return AsyncOpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key,
        http_client=settings.http_client,
        max_retries=0,
    )


class MathAgent:
    """One chat completion per episode, scored by ``math_reward_fn``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs.copy()
        self.kwargs.pop("max_tokens", None)
        self.kwargs.pop("max_turns", None)
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        client = _client(extra_kwargs)
        completion = await client.chat.completions.create(
            messages=data["messages"], model="default", **self.kwargs
        )
        return await self._reward_fn(
            completions=completion.choices[0].message.content, answer=data["answer"]
        )


class MultiTurnMathAgent:
    """Up to ``max_turns`` completions; after a wrong one the agent asks again with feedback.

    Returns ``{completion id: reward}`` so the proxy gives each turn its own reward.
    """

    def __init__(self, max_turns: int = 8, **kwargs: Any) -> None:
        self.max_turns = max_turns
        self.kwargs = kwargs.copy()
        self.kwargs.pop("max_tokens", None)
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> dict[str, float]:
        client = _client(extra_kwargs)
        messages = list(data["messages"])
        rewards: dict[str, float] = {}
        for _ in range(self.max_turns):
            completion = await client.chat.completions.create(
                messages=messages, model="default", **self.kwargs
            )
            message = completion.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            reward = await self._reward_fn(completions=message.content, answer=data["answer"])
            rewards[completion.id] = reward
            if reward == 1:
                break
            messages.append({"role": "user", "content": RETRY_FEEDBACK})
        return rewards


# The calculator: Agents SDK function tools with AReaL's names and parameters.
CALCULATOR_TOOLS = [function_tool(plain_function(t, "agents_sdk", __name__)) for t in CALCULATOR]
add, subtract, multiply, divide, power, sqrt = CALCULATOR_TOOLS


class MathToolAgent:
    """An Agents SDK agent that must compute with the calculator tools; the final output's
    reward is the episode's. Constructor keywords become the run's ``ModelSettings``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs.copy()
        self.kwargs.pop("max_tokens", None)
        self.kwargs.pop("max_turns", None)
        self._reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        run_config = RunConfig(
            model_provider=OpenAIProvider(openai_client=_client(extra_kwargs)),
            model="default",
            tracing_disabled=True,
            model_settings=ModelSettings(**self.kwargs),
        )
        agent = Agent(
            name=TOOL_AGENT_NAME, instructions=TOOL_AGENT_INSTRUCTIONS, tools=CALCULATOR_TOOLS
        )
        result = await OpenAIRunner.run(
            agent,
            input=data["messages"][-1]["content"],
            session=SQLiteSession("math"),
            run_config=run_config,
        )
        return await self._reward_fn(completions=result.final_output, answer=data["answer"])
