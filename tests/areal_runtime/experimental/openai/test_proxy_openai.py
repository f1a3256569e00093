# SPDX-License-Identifier: Apache-2.0
"""The proxy driven by the real ``openai.AsyncOpenAI`` client."""

import numpy as np
import openai
import pytest
from openai import AsyncOpenAI

from areal_runtime import workflow_context
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.cache import UnknownCompletionError
from areal_runtime.experimental.openai.proxy import AgentProxy, AgentProxyWorkflow
from areal_runtime.models.tokenizers import tiny_tokenizer

QUESTION = {"messages": [{"role": "user", "content": "What is 2+2?"}], "answer": "4"}


def client(kw) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"], max_retries=0
    )


class SingleTurn:
    async def run(self, data, **kw):
        r = await client(kw).chat.completions.create(model="default", messages=data["messages"])
        return float(r.choices[0].message.content.strip() == data["answer"])


class MultiTurn:
    async def run(self, data, **kw):
        c, msgs, rewards = client(kw), list(data["messages"]), {}
        for _ in range(3):
            r = await c.chat.completions.create(model="default", messages=msgs)
            rewards[r.id] = float(r.choices[0].message.content.strip() == data["answer"])
            msgs += [r.choices[0].message.model_dump(), {"role": "user", "content": "Sure?"}]
        return rewards


@pytest.fixture
def tok():
    return tiny_tokenizer()


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", ["inline", "socket"])
async def test_single_turn_tensors_come_from_recorded_tokens(tok, transport):
    engine = ScriptedEngine(["4"], tokenizer=tok, logprob=-0.3, version=2)
    async with AgentProxy(engine, tok, transport=transport) as proxy:
        if transport == "socket":
            assert proxy.base_url.startswith("http://127.0.0.1:")
        traj = await AgentProxyWorkflow(SingleTurn(), proxy).arun_episode(None, QUESTION)
    req = engine.requests[0]
    n_prompt = len(req.input_ids)
    ids = traj["input_ids"][0].tolist()
    assert ids[:n_prompt] == req.input_ids
    assert tok.decode(ids[n_prompt:]) == "4<|im_end|>"  # the eos the engine produced is kept
    assert traj["loss_mask"][0].tolist() == [0] * n_prompt + [1, 1]
    assert traj["logprobs"][0, n_prompt:].tolist() == pytest.approx([-0.3, -0.3])
    assert traj["versions"][0].tolist() == [-1] * n_prompt + [2, 2]
    assert traj["rewards"].tolist() == [1.0]
    assert req.gconfig.stop_token_ids == [tok.pad_token_id, tok.eos_token_id]


@pytest.mark.asyncio
async def test_multi_turn_dict_rewards_with_discount_and_parents(tok):
    engine = ScriptedEngine(["3", "5", "4"], tokenizer=tok)
    async with AgentProxy(engine, tok) as proxy:
        traj = await AgentProxyWorkflow(MultiTurn(), proxy, turn_discount=0.5).arun_episode(
            None, QUESTION
        )
    # rewards 0, 0, 1 in order; return-to-go with discount 0.5 -> 0.25, 0.5, 1
    assert traj["rewards"].tolist() == [0.25, 0.5, 1.0]
    assert traj["input_ids"].shape[0] == 3
    second_prompt = engine.requests[1].input_ids
    first = engine.requests[0].input_ids
    assert second_prompt[: len(first)] == first  # history is a prefix


@pytest.mark.asyncio
async def test_concat_export_keeps_one_leaf_with_every_turn_trained(tok):
    engine = ScriptedEngine(["3", "5", "4"], tokenizer=tok)
    async with AgentProxy(engine, tok, chat_template_type="concat") as proxy:
        wf = AgentProxyWorkflow(MultiTurn(), proxy, export_style="concat")
        traj = await wf.arun_episode(None, QUESTION)
    assert traj["input_ids"].shape[0] == 1
    trained = traj["input_ids"][0][traj["loss_mask"][0].bool()].tolist()
    assert tok.decode(trained) == "3<|im_end|>5<|im_end|>4<|im_end|>"


@pytest.mark.asyncio
async def test_tools_n_logprobs_and_usage(tok):
    call = '<tool_call>{"name": "calc", "arguments": {"expr": "2+2"}}</tool_call>'
    engine = ScriptedEngine([call, "a", "b", "long answer"], tokenizer=tok, logprob=-0.5)
    tools = [{"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}}]
    async with AgentProxy(engine, tok) as proxy, proxy.session(7) as session:
        c = client(session.extra_kwargs)
        r = await c.chat.completions.create(model="m", messages=QUESTION["messages"], tools=tools)
        assert r.choices[0].finish_reason == "tool_calls" and r.id.startswith("chatcmpl-")
        fn = r.choices[0].message.tool_calls[0].function
        assert fn.name == "calc" and fn.arguments == '{"expr": "2+2"}'
        assert '"name": "calc"' in tok.decode(engine.requests[0].input_ids)  # tools rendered
        r = await c.chat.completions.create(
            model="m", messages=QUESTION["messages"], n=2, logprobs=True
        )
        assert [ch.message.content for ch in r.choices] == ["a", "b"]
        assert r.choices[0].logprobs.content[0].logprob == -0.5
        assert r.usage.completion_tokens == 4 and r.usage.prompt_tokens == len(
            engine.requests[1].input_ids
        )
        r = await c.chat.completions.create(model="m", messages=QUESTION["messages"], max_tokens=1)
        session.set_rewards({r.id: np.float32(0.5)})
        exported = session.export()
        assert len(exported) == 4  # tool call, two choices, truncated one
    assert r.choices[0].finish_reason == "length"


@pytest.mark.asyncio
async def test_reward_type_rules(tok):
    engine = ScriptedEngine(["x"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok) as proxy:
        for value, expected in [(1, 1.0), (np.int64(2), 2.0), (np.float64(0.5), 0.5)]:
            async with proxy.session() as s:
                await client(s.extra_kwargs).chat.completions.create(
                    model="m", messages=QUESTION["messages"]
                )
                s.set_rewards(value)
                assert next(iter(s.export().values())).reward == expected
        async with proxy.session() as s:
            await client(s.extra_kwargs).chat.completions.create(
                model="m", messages=QUESTION["messages"]
            )
            with pytest.raises(UnknownCompletionError, match="chatcmpl-nope"):
                s.set_rewards({"chatcmpl-nope": 1.0})
            with pytest.raises(TypeError, match="must be a number"):
                s.set_rewards(True)
            with pytest.raises(TypeError, match="returned None"):
                s.set_rewards(None)


@pytest.mark.asyncio
async def test_agent_with_no_completion_is_rejected(tok):
    class Silent:
        async def run(self, data, **kw):
            return 1.0

    async with AgentProxy(ScriptedEngine(["x"], tokenizer=tok), tok) as proxy:
        with workflow_context.collecting_notes() as notes:
            assert await AgentProxyWorkflow(Silent(), proxy).arun_episode(None, QUESTION) is None
        assert notes[0].startswith("Silent.run returned 1.0 without calling the model")
        assert f"base_url={proxy.base_url} " in notes[0]
    with pytest.raises(TypeError, match="async def run"):
        AgentProxyWorkflow(object(), proxy)


@pytest.mark.asyncio
async def test_bad_requests_get_openai_errors(tok):
    engine = ScriptedEngine(["x"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        c = client(s.extra_kwargs)
        with pytest.raises(openai.BadRequestError, match="max_completion_tokens or the deprecated"):
            await c.chat.completions.create(
                model="m", messages=QUESTION["messages"], max_tokens=3, max_completion_tokens=3
            )
        with pytest.raises(openai.BadRequestError, match="non-empty list"):
            await c.chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.BadRequestError, match="stream=true"):
            await c.chat.completions.create(
                model="m", messages=QUESTION["messages"], stream_options={"include_usage": True}
            )
        raw = await s.extra_kwargs["http_client"].post(
            "/chat/completions",
            content=b"{oops",
            headers={"Authorization": f"Bearer {s.extra_kwargs['api_key']}"},
        )
        assert raw.status_code == 400 and "not valid JSON" in raw.json()["error"]["message"]
