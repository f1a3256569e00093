# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit serve``'s request log reads what the proxy parsed: it never parses a body on
its own, never raises on a hostile one, and never changes the proxy's sessions."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from areal_devkit.serving.request_log import RequestLog
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import ProxyState, create_proxy_app
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = "admin-key"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def logged_proxy(clock: Clock | None = None) -> tuple[ProxyState, Any, list[str], list[dict]]:
    tok = tiny_tokenizer()
    state = ProxyState(
        ScriptedEngine(["hello"], tokenizer=tok, cycle=True),
        tok,
        admin_api_key=ADMIN,
        **({"clock": clock} if clock else {}),
    )
    lines: list[str] = []
    records: list[dict] = []
    return state, RequestLog(create_proxy_app(state), lines.append, records.append), lines, records


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy")


@pytest.mark.asyncio
async def test_a_body_nested_10000_deep_is_the_proxys_400_and_one_log_line():
    """Found: the logger parsed the body again and raised RecursionError (a 500 traceback)."""
    state, app, lines, records = logged_proxy()
    session = state.start_session()
    body = b'{"messages": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    async with client(app) as http:
        r = await http.post(
            "/v1/chat/completions",
            content=body,
            headers={"authorization": f"Bearer {session.api_key}"},
        )
    assert r.status_code == 400 and "nested deeper than 64" in r.text
    (line,) = lines
    assert "400 " in line and session.session_id in line
    assert "error: the body is nested deeper than 64" in line
    assert records[0]["request"].startswith('{"messages": [[[')  # the head of the raw text


@pytest.mark.asyncio
async def test_logging_never_refreshes_or_sweeps_a_session():
    """Found: the logger looked the key up with session_for, which refreshed last_active."""
    clock = Clock()
    state, app, lines, _ = logged_proxy(clock)
    session = state.start_session()
    clock.now = 100.0
    async with client(app) as http:  # a session key on an admin route: 403, no lookup
        r = await http.post(
            "/export_trajectories",
            json={"session_id": session.session_id},
            headers={"authorization": f"Bearer {session.api_key}"},
        )
    assert r.status_code == 403
    assert session.last_active == 0.0
    assert lines[0].split()[5] == "-"  # the proxy never accepted the key, so no session shown


@pytest.mark.asyncio
async def test_the_line_shows_the_session_the_summary_and_the_tokens_or_the_error():
    state, app, lines, records = logged_proxy()
    session = state.start_session()
    auth = {"authorization": f"Bearer {session.api_key}"}
    messages = [{"role": "user", "content": "What is 2+3?"}]
    async with client(app) as http:
        ok = await http.post("/v1/chat/completions", json={"messages": messages}, headers=auth)
        bad = await http.post(
            "/v1/chat/completions", json={"messages": messages, "top_p": 5}, headers=auth
        )
    assert ok.status_code == 200 and bad.status_code == 400
    item = session.completions[ok.json()["id"]].model_response
    assert lines[0].endswith(
        f'{session.session_id} msgs=1 user:"What is 2+3?" -> {item.input_len}+{item.output_len} tok'
    )
    assert "error: 'top_p' must be between" in lines[1]
    assert records[1]["request"] == {"messages": messages, "top_p": 5}
    assert records[1]["error"] == json.loads(bad.text)["error"]["message"]


@pytest.mark.asyncio
async def test_the_line_shows_time_to_first_token_and_prompt_tokens_from_the_prefix_cache():
    # The local engine says how many prompt tokens its prefix cache supplied: none the first
    # time, the whole blocks of the shared prompt the second time.
    from areal_runtime.engine.local import LocalEngine
    from areal_runtime.models.default_model import load_default_model

    model, tok = load_default_model()
    engine = LocalEngine(model, tok, prefix_cache_block=4)
    state = ProxyState(engine, tok, admin_api_key=ADMIN)
    lines: list[str] = []
    app = RequestLog(create_proxy_app(state), lines.append)
    session = state.start_session()
    auth = {"authorization": f"Bearer {session.api_key}"}
    body = {"messages": [{"role": "user", "content": "What is 12+7?"}], "max_tokens": 3}
    try:
        async with client(app) as http:
            answers = [
                await http.post("/v1/chat/completions", json=body, headers=auth) for _ in range(2)
            ]
    finally:
        engine.close()
    assert all(a.status_code == 200 for a in answers)
    for line, answer, cached in zip(lines, answers, (0, None), strict=True):
        item = session.completions[answer.json()["id"]].model_response
        fields = line.split()
        total, ttft = float(fields[4][:-1]), fields[5]
        assert ttft == f"ttft={item.ttft:.2f}s" and 0 < item.ttft <= total + 0.01
        assert fields[6] == session.session_id
        hit = cached if cached is not None else item.input_len // 4 * 4
        if hit == item.input_len:  # one token is always computed for the first output's logits
            hit -= 4
        assert line.endswith(f"-> {item.input_len}+{item.output_len} tok, {hit} cached")
    assert engine.prefix_cache_stats().hit_tokens == hit > 0


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", ["inline", "socket"])
async def test_the_log_is_a_middleware_of_the_proxys_own_app(transport):
    """``serve`` hands the log to ``AgentProxy``; both transports' requests pass through it."""
    from starlette.middleware import Middleware

    from areal_runtime.experimental.openai.proxy import AgentProxy

    tok = tiny_tokenizer()
    lines: list[str] = []
    records: list[dict] = []
    proxy = AgentProxy(
        ScriptedEngine(["hello"], tokenizer=tok, cycle=True),
        tok,
        transport=transport,
        middleware=[Middleware(RequestLog, emit=lines.append, record=records.append)],
    )
    async with proxy, proxy.session() as s:
        kw = s.extra_kwargs
        r = await kw["http_client"].post(
            f"{kw['base_url']}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {kw['api_key']}"},
        )
    assert r.status_code == 200, r.text
    (line,) = lines
    assert " POST /v1/chat/completions 200 " in line and s.session_id in line
    assert records[0]["request"] == {"messages": [{"role": "user", "content": "hi"}]}
