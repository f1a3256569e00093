# SPDX-License-Identifier: Apache-2.0
"""Session keys, admin routes and bind rules."""

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.experimental.openai.proxy.server import DEFAULT_ADMIN_API_KEY
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "s3cret-admin"
MESSAGES = [{"role": "user", "content": "hi"}]


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


# Who may call what. "own" is session A's key and targets A's completion or session, "other" is
# session B's key on A's things, "admin" the admin key, "none" no key at all.
ACCESS = {
    ("GET /chat/completions/{cid}", "own"): 200,
    ("GET /chat/completions/{cid}", "other"): 403,
    ("GET /chat/completions/{cid}", "admin"): 401,
    ("GET /chat/completions/{cid}", "none"): 401,
    ("POST /rl/set_reward", "own"): 200,
    ("POST /rl/set_reward", "other"): 403,
    ("POST /rl/set_reward", "admin"): 401,
    ("POST /rl/set_reward", "none"): 401,
    ("POST /chat/completions", "own"): 200,
    ("POST /chat/completions", "admin"): 401,
    ("POST /chat/completions", "none"): 401,
    ("POST /rl/end_session", "own"): 200,
    ("POST /rl/end_session", "admin"): 401,
    ("POST /rl/end_session", "none"): 401,
    ("POST /rl/start_session", "own"): 403,
    ("POST /rl/start_session", "admin"): 200,
    ("POST /rl/start_session", "none"): 401,
    ("POST /export_trajectories", "own"): 403,
    ("POST /export_trajectories", "other"): 403,
    ("POST /export_trajectories", "admin"): 200,
    ("POST /export_trajectories", "none"): 401,
    ("POST /grant_capacity", "own"): 403,
    ("POST /grant_capacity", "admin"): 200,
    ("POST /grant_capacity", "none"): 401,
}


def _request(route: str, cid: str, session_id: str) -> tuple[str, str, dict | None]:
    method, path = route.split(" ")
    body = {
        "POST /rl/set_reward": {"interaction_id": cid, "reward": 1},
        "POST /chat/completions": {"messages": MESSAGES},
        "POST /rl/start_session": {"task_id": 9},
        "POST /export_trajectories": {"session_id": session_id},
    }.get(route, {} if method == "POST" else None)
    return method, path.replace("{cid}", cid), body


@pytest.mark.asyncio
@pytest.mark.parametrize(("route", "key"), list(ACCESS), ids=lambda v: str(v))
async def test_route_by_key(route, key):
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["x"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok, admin_api_key=ADMIN) as proxy:
        http: httpx.AsyncClient = proxy.http_client
        a = (
            await http.post("/rl/start_session", json={"task_id": 1}, headers=bearer(ADMIN))
        ).json()
        b = (
            await http.post("/rl/start_session", json={"task_id": 2}, headers=bearer(ADMIN))
        ).json()
        done = await http.post(
            "/chat/completions", json={"messages": MESSAGES}, headers=bearer(a["api_key"])
        )
        cid = done.json()["id"]
        keys = {"own": a["api_key"], "other": b["api_key"], "admin": ADMIN, "none": None}
        method, path, body = _request(route, cid, a["session_id"])
        headers = bearer(keys[key]) if keys[key] else {}
        answer = await http.request(method, path, json=body, headers=headers)
        assert answer.status_code == ACCESS[(route, key)], answer.text
        if answer.status_code >= 400:
            assert answer.json()["error"]["message"]  # an OpenAI-style error that says why
        # whatever was refused, session A's completion is untouched
        if answer.status_code != 200 and route != "POST /export_trajectories":
            got = await http.get(f"/chat/completions/{cid}", headers=bearer(a["api_key"]))
            assert got.json()["id"] == cid


@pytest.mark.asyncio
async def test_a_session_from_start_to_export():
    tok = tiny_tokenizer()
    async with AgentProxy(
        ScriptedEngine(["x"], tokenizer=tok, cycle=True), tok, admin_api_key=ADMIN
    ) as proxy:
        http: httpx.AsyncClient = proxy.http_client
        assert (
            await http.post("/chat/completions", json={"messages": MESSAGES}, headers=bearer("bad"))
        ).status_code == 401
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
        assert exported["interactions"][cid]["reward"] == 0.5
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
        AgentProxy(
            None, tok, transport="socket", host="0.0.0.0", admin_api_key=DEFAULT_ADMIN_API_KEY
        )
    AgentProxy(None, tok, transport="socket", host="0.0.0.0", admin_api_key=ADMIN)
    AgentProxy(None, tok, transport="socket", host="127.0.0.1")


@pytest.mark.asyncio
async def test_a_socket_proxy_without_a_key_gets_a_random_one():
    tok = tiny_tokenizer()
    first = AgentProxy(ScriptedEngine(["x"], tokenizer=tok), tok, transport="socket")
    second = AgentProxy(ScriptedEngine(["x"], tokenizer=tok), tok, transport="socket")
    assert first.admin_api_key != DEFAULT_ADMIN_API_KEY and len(first.admin_api_key) >= 24
    assert first.admin_api_key != second.admin_api_key
    # The inline transport serves a socket too (for the agents' child processes).
    assert AgentProxy(None, tok).admin_api_key not in (DEFAULT_ADMIN_API_KEY, first.admin_api_key)
    async with first:
        guess = await first.http_client.post(
            f"{first.base_url}/rl/start_session", json={}, headers=bearer(DEFAULT_ADMIN_API_KEY)
        )
        assert guess.status_code == 401
        ok = await first.http_client.post(
            f"{first.base_url}/rl/start_session", json={}, headers=bearer(first.admin_api_key)
        )
        assert ok.status_code == 200
