# SPDX-License-Identifier: Apache-2.0
"""AReaL's worker process (``proxy_rollout_server``) on a real engine: the session's own cache
records what its ``ArealOpenAI`` client generated, streamed or not, and the export trains on it."""

from __future__ import annotations

import json

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import proxy_rollout_server as srv
from areal_runtime.experimental.openai.proxy.export_format import tensor_dicts
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "sk-worker-admin"
HI = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture
def worker(monkeypatch):
    for name, value in [
        ("_session_cache", {}),
        ("_api_key_to_session", {}),
        ("_session_to_api_key", {}),
        ("_capacity", 0),
    ]:
        monkeypatch.setattr(srv, name, value)
    tok = tiny_tokenizer()
    monkeypatch.setattr(srv, "_openai_client", None)
    srv.setup(ScriptedEngine(["4"], tokenizer=tok, cycle=True), tok, ADMIN)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=srv.app), base_url="http://w")
    return client


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.asyncio
async def test_worker_records_streamed_and_plain_answers_in_the_session(worker):
    async with worker as http:
        await http.post("/grant_capacity", headers=bearer(ADMIN))
        started = (await http.post("/rl/start_session", json={"task_id": "t"}, headers=bearer(ADMIN))).json()  # fmt: skip
        key, sid = started["api_key"], started["session_id"]
        plain = await http.post("/chat/completions", json={"messages": HI}, headers=bearer(key))
        assert plain.status_code == 200 and plain.json()["choices"][0]["message"]["content"] == "4"
        follow = [*HI, plain.json()["choices"][0]["message"], {"role": "user", "content": "Sure?"}]
        streamed = await http.post(
            "/chat/completions", json={"messages": follow, "stream": True}, headers=bearer(key)
        )
        events = [e for e in streamed.text.split("\n\n") if e.startswith("data: ")]
        assert events[-1] == "data: [DONE]"
        assert json.loads(events[0][6:])["object"] == "chat.completion.chunk"
        session = srv._session_cache[sid]
        assert len(session.completions) == 2
        first, second = session.completions.values()
        assert second.parent is first
        await http.post("/rl/set_reward", json={"reward": 1.0}, headers=bearer(key))
        await http.post("/rl/end_session", headers=bearer(key))
        exported = await http.post(
            "/export_trajectories", json={"session_id": sid}, headers=bearer(ADMIN)
        )
        rows = tensor_dicts(exported.json())
        assert [float(r["rewards"][0]) for r in rows] == [1.0, 1.0]
        assert sid not in srv._session_cache and not srv._openai_client._cache_sessions
