# SPDX-License-Identifier: Apache-2.0
"""AReaL's gateway API on the proxy: health, models, session refresh with one key, online
episodes that wait for outside sessions, and the requested model name echoed back."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy, OpenAIProxyWorkflow
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "sk-admin-for-tests"
CHAT = {"model": "Qwen/Qwen3-0.6B", "messages": [{"role": "user", "content": "What is 2+2?"}]}


def proxy_on(answers: list[str], **kwargs) -> AgentProxy:
    tok = tiny_tokenizer()
    engine = ScriptedEngine(answers, tokenizer=tok, cycle=True, logprob=-0.5)
    return AgentProxy(engine, tok, admin_api_key=ADMIN, **kwargs)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def start(client: httpx.AsyncClient, **body) -> httpx.Response:
    return await client.post(
        "/rl/start_session", json={"task_id": "t", **body}, headers=bearer(ADMIN)
    )


async def chat(client: httpx.AsyncClient, key: str, **extra) -> dict:
    resp = await client.post("/chat/completions", json={**CHAT, **extra}, headers=bearer(key))
    assert resp.status_code == 200, resp.text
    return resp.json()


async def export(client: httpx.AsyncClient, session_id: str) -> httpx.Response:
    return await client.post(
        "/export_trajectories", json={"session_id": session_id}, headers=bearer(ADMIN)
    )


@pytest.mark.asyncio
async def test_refreshing_a_key_ends_and_hands_on_the_old_session_and_rebinds_the_key():
    async with proxy_on(["4"]) as proxy:
        client = proxy.http_client
        first = (await start(client)).json()
        key = first["api_key"]
        old_completion = await chat(client, key)
        ended = []
        proxy.gateway.on_session_end.append(lambda s: ended.append(s.session_id))

        refreshed = await start(client, api_key=key)

        assert refreshed.status_code == 200
        assert refreshed.json()["api_key"] == key  # the agent keeps its one key
        new_id = refreshed.json()["session_id"]
        assert new_id != first["session_id"]
        assert ended == [first["session_id"]]  # the old session was ended and handed on
        new_completion = await chat(client, key)  # the key now records into the new session
        old = (await export(client, first["session_id"])).json()["interactions"]
        new = (await export(client, new_id)).json()["interactions"]
        assert list(old) == [old_completion["id"]] and list(new) == [new_completion["id"]]
        assert old[old_completion["id"]]["reward"] == 0.0  # no reward set: 0, as in AReaL


@pytest.mark.asyncio
async def test_start_session_key_rules_reuse_replace_and_refuse_the_admin_key():
    async with proxy_on(["4"]) as proxy:
        client = proxy.http_client
        first = (await start(client)).json()
        ended = await client.post("/rl/end_session", headers=bearer(first["api_key"]))
        assert ended.json()["interaction_count"] == 0
        reused = (await start(client, api_key=first["api_key"])).json()
        assert reused["api_key"] == first["api_key"]  # an issued key whose session ended

        unknown = (await start(client, api_key="sk-never-issued")).json()
        assert unknown["api_key"] != "sk-never-issued"  # replaced, as AReaL's gateway does

        admin = await start(client, api_key=ADMIN)
        assert admin.status_code == 400 and "admin key" in admin.json()["error"]["message"]


@pytest.mark.asyncio
async def test_health_and_models_answer_without_a_session():
    async with proxy_on(["4"]) as proxy:
        client = proxy.http_client
        health = await client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        for path in ("/v1/models", "/models"):
            models = await client.get(path)
            assert models.status_code == 200
            assert models.json()["object"] == "list"
            assert [m["object"] for m in models.json()["data"]] == ["model"]


@pytest.mark.asyncio
async def test_replies_carry_the_model_name_the_request_named():
    async with proxy_on(["4"]) as proxy:
        client = proxy.http_client
        key = (await start(client)).json()["api_key"]
        assert (await chat(client, key))["model"] == CHAT["model"]
        streamed = await client.post(
            "/v1/chat/completions", json={**CHAT, "stream": True}, headers=bearer(key)
        )
        chunks = [
            json.loads(line[6:])
            for line in streamed.text.splitlines()
            if line.startswith("data: {")
        ]
        assert chunks and {c["model"] for c in chunks} == {CHAT["model"]}
        response = await client.post(
            "/v1/responses", json={"model": "gpt-x", "input": "hi"}, headers=bearer(key)
        )
        assert response.json()["model"] == "gpt-x"


@pytest.mark.asyncio
async def test_an_online_episode_waits_for_an_outside_session_and_trains_on_it():
    async with proxy_on(["4"], transport="socket") as proxy:
        proxy.state.capacity = 0  # as an online trainer: sessions only for waiting episodes
        proxy.gateway.online = True
        workflow = OpenAIProxyWorkflow(
            mode="online",
            proxy_addr=proxy.base_url,
            admin_api_key=ADMIN,
            proxy_gateway_addr=proxy.base_url,
        )
        episode = asyncio.ensure_future(workflow.arun_episode(None, {}))
        outside_client = httpx.AsyncClient(base_url=proxy.base_url)  # noqa: ARL302 (an outside agent)
        async with outside_client as outside:
            for _ in range(100):  # the episode registers itself as ready
                if proxy.gateway.waiting_episodes:
                    break
                await asyncio.sleep(0.02)
            started = (await start(outside)).json()
            assert set(started) == {"session_id", "api_key"}  # AReaL's StartSessionResponse
            key = started["api_key"]
            completion = await chat(outside, key)
            rewarded = await outside.post(
                "/rl/set_reward", json={"reward": 0.75}, headers=bearer(key)
            )
            assert rewarded.json()["message"] == "success"  # AReaL's reply, and "ok": true
            assert not episode.done()  # still open: the episode waits for its end
            ended = await outside.post("/rl/end_session", headers=bearer(key))
            assert ended.json()["interaction_count"] == 1
            traj = await asyncio.wait_for(episode, 10)
            assert traj["rewards"].tolist() == [0.75]
            assert int(traj["loss_mask"].sum()) == completion["usage"]["completion_tokens"]


@pytest.mark.asyncio
async def test_online_sessions_wait_for_an_episode_and_answer_429_when_none_comes():
    async with proxy_on(["4"]) as proxy:
        proxy.gateway.online = True
        proxy.gateway.refresh_timeout_s = 0.2
        client = proxy.http_client
        waiting = asyncio.ensure_future(start(client))  # a client faster than the trainer
        await asyncio.sleep(0.05)
        episode = asyncio.ensure_future(proxy.gateway.wait_for_session("http://w", task_id=7))
        first = await waiting
        assert first.status_code == 200
        session = proxy.state.sessions[first.json()["session_id"]]
        assert session.task_id == 7  # recorded under the episode that trains on it
        late = await start(client, api_key=first.json()["api_key"])  # no episode waits now
        assert late.status_code == 429 and "timed out" in late.json()["error"]["message"]
        assert (await episode).session_id == session.session_id  # the refresh handed it on


@pytest.mark.asyncio
async def test_an_online_proxy_starts_a_session_only_for_a_waiting_episode():
    async with proxy_on(["4"], online=True) as proxy:
        proxy.gateway.refresh_timeout_s = 0.2
        client = proxy.http_client
        alone = await start(client)  # no episode waits: capacity 0 and nothing to hand it to
        assert alone.status_code == 429
        assert proxy.state.sessions == {}
        granted = await client.post("/grant_capacity", headers=bearer(ADMIN))  # as an episode does
        assert granted.json() == {"capacity": 1}
        episode = asyncio.ensure_future(proxy.gateway.wait_for_session("http://w", task_id=3))
        await asyncio.sleep(0.05)
        started = await start(client)
        assert started.status_code == 200
        assert proxy.state.sessions[started.json()["session_id"]].task_id == 3
        await client.post("/rl/end_session", headers=bearer(started.json()["api_key"]))
        assert (await asyncio.wait_for(episode, 5)).session_id == started.json()["session_id"]


def test_openai_proxy_workflow_takes_areals_constructor():
    class Agent:
        async def run(self, data, **kw):
            return 1.0

    wf = OpenAIProxyWorkflow("inline", Agent(), "http://127.0.0.1:1/", "key", 0.9, "concat", 2)
    assert (wf.mode, wf.proxy_addr, wf.discount, wf.export_style) == (
        "inline",
        "http://127.0.0.1:1",
        0.9,
        "concat",
    )
    with pytest.raises(ValueError, match="proxy_gateway_addr"):
        OpenAIProxyWorkflow(mode="online")
    with pytest.raises(ValueError, match="needs an agent"):
        OpenAIProxyWorkflow(mode="inline")


@pytest.mark.asyncio
async def test_openai_proxy_workflow_runs_an_agent_against_a_proxy_by_url():
    class Agent:
        async def run(self, data, **kw):
            from openai import AsyncOpenAI

            client = AsyncOpenAI(
                base_url=kw["base_url"], api_key=kw["api_key"], http_client=kw["http_client"]
            )
            r = await client.chat.completions.create(model="m", messages=data["messages"])
            return {r.id: 0.5}

    async with proxy_on(["4"], transport="socket") as proxy:
        wf = OpenAIProxyWorkflow("inline", Agent(), proxy.base_url, ADMIN)
        traj = await wf.arun_episode(None, {"messages": CHAT["messages"]})
        assert traj["rewards"].tolist() == [0.5]
        assert not proxy.state.sessions  # ended and exported


@pytest.mark.asyncio
async def test_the_export_is_in_areals_wire_format_with_exact_tensors():
    from areal_runtime.experimental.openai.proxy.export_format import tensor_dicts

    async with proxy_on(["4"]) as proxy:
        client = proxy.http_client
        started = (await start(client)).json()
        completion = await chat(client, started["api_key"])
        await client.post(
            "/rl/set_reward", json={"reward": 0.5}, headers=bearer(started["api_key"])
        )
        recorded = proxy.state.sessions[started["session_id"]].completions[completion["id"]]
        expected = recorded.to_tensor_dict()
        body = (await export(client, started["session_id"])).json()
    item = body["interactions"][completion["id"]]
    assert item["interaction_id"] == completion["id"] and item["reward"] == 0.5
    assert {v["type"] for v in item["tensor_dict"].values()} == {"tensor"}
    assert item["tensor_dict"]["input_ids"]["dtype"] == "torch.int32"
    (row,) = tensor_dicts(body)
    assert set(row) == set(expected)
    for key, tensor in expected.items():
        assert row[key].dtype == tensor.dtype and row[key].tolist() == tensor.tolist(), key
