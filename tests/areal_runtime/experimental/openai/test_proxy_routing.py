# SPDX-License-Identifier: Apache-2.0
"""The proxy's HTTP edge: an unexpected failure is an error body in the route's API shape,
the /rl control plane answers as flat routes did, and the request log sees each error."""

import httpx
import pytest

from areal_devkit.serving.request_log import RequestLog
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import ProxyState, create_proxy_app
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = {"Authorization": "Bearer areal-admin-key"}
HI = [{"role": "user", "content": "hi"}]


class BrokenEngine(ScriptedEngine):
    """An engine whose generation fails as a bug in it would."""

    async def agenerate(self, req):
        raise RuntimeError("engine fell over")


def client(engine_cls=ScriptedEngine):
    tok = tiny_tokenizer()
    state = ProxyState(engine_cls(["ok"], tokenizer=tok, cycle=True), tok)
    records = []
    app = RequestLog(create_proxy_app(state), lambda line: None, records.append)
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://proxy"), records


async def session_key(http):
    started = await http.post("/rl/start_session", json={"task_id": "t"}, headers=ADMIN)
    return {"Authorization": f"Bearer {started.json()['api_key']}"}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("path", "body", "error_of"),
    [
        ("/chat/completions", {"messages": HI}, lambda b: b["error"]),
        ("/v1/messages", {"messages": HI, "max_tokens": 8}, lambda b: b["error"]),
    ],
)
async def test_an_engine_failure_is_a_500_in_the_route_api_shape(path, body, error_of):
    http, records = client(BrokenEngine)
    async with http:
        key = await session_key(http)
        reply = await http.post(path, json=body, headers=key)
    assert reply.status_code == 500
    payload = reply.json()
    assert "engine fell over" in error_of(payload)["message"]
    assert error_of(payload)["message"].startswith("RuntimeError: ")
    if path == "/v1/messages":  # Anthropic's shape, which its SDK maps to an APIError
        assert payload["type"] == "error"
        assert error_of(payload)["type"] == "api_error"
    else:
        assert error_of(payload)["type"] == "server_error"
    assert records[-1]["status"] == 500
    assert "engine fell over" in records[-1]["error"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/rl", 404),
        ("POST", "/rl/", 404),
        ("POST", "/rl/unknown", 404),
        ("GET", "/rl/set_reward", 405),
        ("POST", "/rl/start_session", 200),
    ],
)
async def test_the_control_plane_answers_as_flat_routes_did(method, path, status):
    http, _ = client()
    async with http:
        reply = await http.request(method, path, json={}, headers=ADMIN)
    assert reply.status_code == status
    if status != 200:
        assert reply.json()["error"]["message"] == f"{method} {path}: " + (
            "Not Found" if status == 404 else "Method Not Allowed"
        )


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/v1/completions", "/v1/embeddings", "/v1/chat/complete"])
async def test_an_api_the_proxy_does_not_serve_is_refused_with_the_ones_it_does(path):
    http, _ = client()
    async with http:
        reply = await http.post(path, json={"model": "m", "prompt": "2+3="}, headers=ADMIN)
    assert reply.status_code == 404
    message = reply.json()["error"]["message"]
    assert message.startswith(f"POST {path}: Not Found")
    for served in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
        assert served in message


@pytest.mark.asyncio
async def test_a_refusal_reaches_the_request_log_with_its_message():
    http, records = client()
    async with http:
        key = await session_key(http)
        reply = await http.post("/rl/set_reward", json={"reward": "high"}, headers=key)
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "reward must be a finite number, got 'high'"
    assert records[-1]["error"] == "reward must be a finite number, got 'high'"
