# SPDX-License-Identifier: Apache-2.0
"""Session keys, admin routes and bind rules."""

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "s3cret-admin"
MESSAGES = [{"role": "user", "content": "hi"}]


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.asyncio
async def test_sessions_are_isolated_and_admin_routes_need_the_admin_key():
    tok = tiny_tokenizer()
    async with AgentProxy(
        ScriptedEngine(["x"], tokenizer=tok, cycle=True), tok, admin_api_key=ADMIN
    ) as proxy:
        http: httpx.AsyncClient = proxy.http_client
        assert (
            await http.post("/chat/completions", json={"messages": MESSAGES})
        ).status_code == 401
        assert (
            await http.post("/chat/completions", json={"messages": MESSAGES}, headers=bearer("bad"))
        ).status_code == 401
        assert (await http.post("/rl/start_session", json={"task_id": 1})).status_code == 401
        a = (
            await http.post("/rl/start_session", json={"task_id": 1}, headers=bearer(ADMIN))
        ).json()
        b = (
            await http.post("/rl/start_session", json={"task_id": 2}, headers={"x-api-key": ADMIN})
        ).json()
        assert a["session_id"].startswith("1-") and a["api_key"] != b["api_key"]
        done = await http.post(
            "/v1/chat/completions", json={"messages": MESSAGES}, headers={"x-api-key": a["api_key"]}
        )
        cid = done.json()["id"]
        # session b can neither read nor reward session a's completion
        assert (
            await http.get(f"/chat/completions/{cid}", headers=bearer(b["api_key"]))
        ).status_code == 403
        stolen = await http.post(
            "/rl/set_reward",
            json={"interaction_id": cid, "reward": 1},
            headers=bearer(b["api_key"]),
        )
        assert stolen.status_code == 403
        assert (await http.get(f"/chat/completions/{cid}", headers=bearer(a["api_key"]))).json()[
            "id"
        ] == cid
        # a session key is not an admin key
        assert (
            await http.post(
                "/export_trajectories",
                json={"session_id": a["session_id"]},
                headers=bearer(a["api_key"]),
            )
        ).status_code == 403
        unknown = await http.post(
            "/rl/set_reward",
            json={"interaction_id": "chatcmpl-x", "reward": 1},
            headers=bearer(a["api_key"]),
        )
        assert unknown.status_code == 400 and "chatcmpl-x" in unknown.json()["error"]["message"]
        ok = await http.post(
            "/rl/set_reward",
            json={"interaction_id": None, "reward": 0.5},
            headers=bearer(a["api_key"]),
        )
        assert ok.status_code == 200
        assert (await http.post("/rl/end_session", headers=bearer(a["api_key"]))).status_code == 200
        exported = (
            await http.post(
                "/export_trajectories",
                json={"session_id": a["session_id"], "discount": 1.0},
                headers=bearer(ADMIN),
            )
        ).json()
        assert exported[cid]["rewards"] == [0.5]
        # the exported session and its key are gone
        assert (
            await http.post(
                "/chat/completions", json={"messages": MESSAGES}, headers=bearer(a["api_key"])
            )
        ).status_code == 401


@pytest.mark.asyncio
async def test_capacity_is_enforced_once_granted():
    tok = tiny_tokenizer()
    async with AgentProxy(ScriptedEngine(["x"], tokenizer=tok), tok, admin_api_key=ADMIN) as proxy:
        http = proxy.http_client
        assert (await http.post("/grant_capacity", headers=bearer(ADMIN))).json() == {"capacity": 1}
        assert (
            await http.post("/rl/start_session", json={}, headers=bearer(ADMIN))
        ).status_code == 200
        assert (
            await http.post("/rl/start_session", json={}, headers=bearer(ADMIN))
        ).status_code == 429


def test_non_loopback_bind_with_default_admin_key_is_refused():
    tok = tiny_tokenizer()
    with pytest.raises(ValueError, match="default admin key"):
        AgentProxy(None, tok, transport="socket", host="0.0.0.0")
    AgentProxy(None, tok, transport="socket", host="0.0.0.0", admin_api_key=ADMIN)
    AgentProxy(None, tok, transport="socket", host="127.0.0.1")
