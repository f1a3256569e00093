# SPDX-License-Identifier: Apache-2.0
"""A CAMEL-AI ``ChatAgent`` solving math through the proxy, in the two shapes AReaL uses.

- ``CamelRLVRWorkflow``: AReaL's ``examples/camel`` shape, a ``RolloutWorkflow`` whose agent
  talks to an ``ArealOpenAI`` client through ``AReaLOpenAICompatibleModel``.
- ``CamelMathAgent``: an agent workflow (``run(data, **extra_kwargs)``), the agent given a real
  ``openai.AsyncOpenAI`` pointed at the proxy, as AReaL's agent workflows are.

CAMEL-AI pins an older pydantic, so this runs in ``.venv-camel`` (``bash scripts/camel_env.sh``):
``.venv-camel/bin/areal-devkit run examples.camel_math:CamelMathAgent``.
"""

from __future__ import annotations

import os
from typing import Any

from camel.agents import ChatAgent
from openai import AsyncOpenAI

from areal_runtime import workflow_context
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.experimental.camel.openai_model import AReaLOpenAICompatibleModel
from areal_runtime.experimental.openai import ArealOpenAI
from areal_runtime.reward import get_math_verify_worker
from areal_runtime.utils import stats_tracker


def gsm8k_reward_fn(result: Any, answer: Any) -> float:
    """1.0 when the reply states the gold answer (math-verify), 0.0 otherwise or on error."""
    try:
        return get_math_verify_worker().verify(str(result), str(answer))
    except Exception:
        return 0.0


def camel_agent(client: Any, tokenizer: Any, model_config: dict[str, Any]) -> ChatAgent:
    """A ChatAgent whose model is the proxy behind ``client`` (no system message, as AReaL's)."""
    model = AReaLOpenAICompatibleModel(
        model_type="areal",
        openai_client=client,
        tokenizer=tokenizer,
        model_config_dict=model_config,
    )
    return ChatAgent(model=model)


def reply_text(response: Any) -> str:
    """The agent's reply; CAMEL gives no message when the model stopped at once (scored 0)."""
    return response.msg.content if response.msg is not None else ""


class CamelRLVRWorkflow(RolloutWorkflow):
    """AReaL's CAMEL example: one ``ChatAgent.astep`` per episode on an ``ArealOpenAI``."""

    def __init__(
        self, gconfig: GenerationHyperparameters, tokenizer: Any, turn_discount: float = 0.9
    ) -> None:
        self.gconfig = gconfig.new_with_stop_and_pad_token_ids(tokenizer)
        self.tokenizer = tokenizer
        self.turn_discount = turn_discount
        self.reward_fn = AsyncRewardWrapper(gsm8k_reward_fn)

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        client = ArealOpenAI(engine=engine, tokenizer=self.tokenizer)
        agent = camel_agent(client, self.tokenizer, {"max_tokens": self.gconfig.max_new_tokens})
        response = await agent.astep(data["messages"][-1]["content"])
        reward = await self.reward_fn(result=reply_text(response), answer=data["answer"])
        client.set_last_reward(reward)
        stats_tracker.get(workflow_context.stat_scope()).scalar(reward=reward)
        client.apply_reward_discount(turn_discount=self.turn_discount)
        return client.export_interactions(style="individual")


class CamelMathAgent:
    """An agent workflow: CAMEL drives the proxy over HTTP with the key the proxy gives it."""

    def __init__(self, tokenizer: Any, max_tokens: int = 32) -> None:
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.reward_fn = AsyncRewardWrapper(gsm8k_reward_fn)

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        client = AsyncOpenAI(
            base_url=extra_kwargs.get("base_url") or os.getenv("OPENAI_BASE_URL"),
            api_key=extra_kwargs.get("api_key") or os.getenv("OPENAI_API_KEY"),
            http_client=extra_kwargs[
                "http_client"
            ],  # the proxy always passes one (None in subproc)
            max_retries=0,
        )
        agent = camel_agent(client, self.tokenizer, {"max_tokens": self.max_tokens})
        response = await agent.astep(data["messages"][-1]["content"])
        return await self.reward_fn(result=reply_text(response), answer=data["answer"])
