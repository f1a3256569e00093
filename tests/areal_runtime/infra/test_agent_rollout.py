# SPDX-License-Identifier: Apache-2.0
"""Agent workflows through the executor: the proxy is wired in automatically."""

import pytest
from openai import AsyncOpenAI

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.infra.workflow_executor import run_rollout
from areal_runtime.models.tokenizers import tiny_tokenizer


class Agent:
    async def run(self, data, **kw):
        if data.get("skip"):
            return 0.0
        c = AsyncOpenAI(
            base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"]
        )
        r = await c.chat.completions.create(model="m", messages=data["messages"])
        return int(r.choices[0].message.content == data["answer"])


@pytest.mark.asyncio
async def test_agents_run_through_the_proxy_and_empty_ones_are_rejected():
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["4", "5"], tokenizer=tok)
    q = {"messages": [{"role": "user", "content": "2+2?"}], "answer": "4"}
    result = await run_rollout(Agent(), [q, q, {"skip": True}], engine, concurrency=1)
    assert [e.reward for e in result.episodes[:2]] == [1.0, 0.0]
    assert result.episodes[2].reason == "none"  # no completion: rejected, unlike AReaL's {}
    assert result.batch["rewards"].tolist() == [1.0, 0.0]


def test_agent_needs_a_tokenizer():
    class NoTok:
        async def agenerate(self, req):
            raise AssertionError

    with pytest.raises(ValueError, match="needs a tokenizer"):
        import asyncio

        asyncio.run(run_rollout(Agent(), [], NoTok()))
