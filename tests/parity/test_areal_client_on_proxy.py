# SPDX-License-Identifier: Apache-2.0
"""AReaL's own ``OpenAIProxyWorkflow`` (real ``areal``) trains through this repository's proxy:
session start, the agent's requests, rewards, end and AReaL's export format, over HTTP."""

from __future__ import annotations

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "sk-parity-admin"
QUESTION = {"messages": [{"role": "user", "content": "What is 2+2?"}]}


class TwoTurnAgent:
    """Talks to the proxy with the base_url and key AReaL's workflow gives it."""

    async def run(self, data, **kw):
        headers = {"Authorization": f"Bearer {kw['api_key']}"}
        messages, rewards = list(data["messages"]), {}
        client = httpx.AsyncClient(base_url=kw["base_url"], timeout=60)  # noqa: ARL301 (one test)
        async with client:
            for reward in (0.25, 1.0):
                body = {"model": "m", "messages": messages}
                answer = (await client.post("/chat/completions", json=body, headers=headers)).json()
                rewards[answer["id"]] = reward
                messages += [answer["choices"][0]["message"], {"role": "user", "content": "Sure?"}]
        return rewards


@pytest.mark.asyncio
async def test_areals_openai_proxy_workflow_runs_an_episode_through_this_proxy() -> None:
    from areal.experimental.openai.proxy.workflow import OpenAIProxyWorkflow

    tok = tiny_tokenizer()
    engine = ScriptedEngine(["4"], tokenizer=tok, cycle=True, logprob=-0.5)
    async with AgentProxy(engine, tok, transport="socket", admin_api_key=ADMIN) as proxy:
        workflow = OpenAIProxyWorkflow(
            mode="inline", agent=TwoTurnAgent(), proxy_addr=proxy.base_url, admin_api_key=ADMIN
        )
        interactions = await workflow.arun_episode(None, QUESTION)
        assert not proxy.state.sessions  # ended and exported
    # discount 1.0: the first turn is trained with its own reward plus the later one
    assert [i.reward for i in interactions.values()] == [1.25, 1.0]
    for item in interactions.values():
        tensors = item.to_tensor_dict()
        generated = tensors["loss_mask"].bool()
        assert tensors["logprobs"][generated].tolist() == pytest.approx(
            [-0.5] * int(generated.sum())
        )


@pytest.mark.asyncio
async def test_deliberate_openai_proxy_workflow_returns_one_padded_batch() -> None:
    """Same constructor, same protocol; AReaL's episode is a dict of interactions, the
    runtime's the padded batch the trainer consumes (its executor accepts either)."""
    from areal.experimental.openai.proxy.workflow import OpenAIProxyWorkflow as Areals

    from areal_runtime.experimental.openai.proxy import OpenAIProxyWorkflow as Runtimes

    tok = tiny_tokenizer()
    engine = ScriptedEngine(["4"], tokenizer=tok, cycle=True, logprob=-0.5)
    async with AgentProxy(engine, tok, transport="socket", admin_api_key=ADMIN) as proxy:
        areal = await Areals("inline", TwoTurnAgent(), proxy.base_url, ADMIN).arun_episode(
            None, QUESTION
        )
        ours = await Runtimes("inline", TwoTurnAgent(), proxy.base_url, ADMIN).arun_episode(
            None, QUESTION
        )
    assert all(type(v).__name__ == "InteractionWithTokenLogpReward" for v in areal.values())
    assert ours["input_ids"].shape[0] == len(areal) == 2
    assert ours["rewards"].tolist() == [i.reward for i in areal.values()]
    for row, item in enumerate(areal.values()):
        mask = item.to_tensor_dict()["loss_mask"][0]
        assert ours["loss_mask"][row, : len(mask)].tolist() == mask.tolist()
