# SPDX-License-Identifier: Apache-2.0
"""The proxy's sessions are bounded: dropped when idle or ended and unexported, capped, freed."""

import gc
import logging
import tracemalloc

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import (
    ProxyState,
    SessionLimits,
    create_proxy_app,
)
from areal_runtime.models.tokenizers import tiny_tokenizer

ADMIN = {"authorization": "Bearer areal-admin-key"}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tok():
    return tiny_tokenizer()


def proxy(tok, limits=None, clock=None):
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    state = ProxyState(engine, tok, session_limits=limits, **({"clock": clock} if clock else {}))
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_proxy_app(state)), base_url="http://proxy"
    )
    return state, http


def bearer(key: str) -> dict:
    return {"authorization": f"Bearer {key}"}


@pytest.mark.asyncio
async def test_an_idle_session_is_dropped_with_a_warning_naming_the_setting(tok, caplog):
    clock = Clock()
    state, http = proxy(tok, SessionLimits(idle_timeout_s=60, ended_ttl_s=None), clock)
    async with http:
        idle = (await http.post("/rl/start_session", json={"task_id": "t"}, headers=ADMIN)).json()
        busy = (await http.post("/rl/start_session", json={}, headers=ADMIN)).json()
        clock.now += 45
        assert (await http.post("/chat/completions", json=CHAT, headers=bearer(busy["api_key"]))).status_code == 200  # fmt: skip
        clock.now += 30  # idle: 75 s, busy: 30 s
        with caplog.at_level(logging.WARNING, logger="areal_runtime.proxy"):
            await http.post("/rl/start_session", json={}, headers=ADMIN)
        assert idle["session_id"] not in state.sessions
        assert busy["session_id"] in state.sessions
        assert (
            idle["session_id"] in caplog.text and "SessionLimits.idle_timeout_s=60" in caplog.text
        )
        again = await http.post("/chat/completions", json=CHAT, headers=bearer(idle["api_key"]))
        assert again.status_code == 401
        assert "was dropped: idle for 75 s" in again.json()["error"]["message"]


@pytest.mark.asyncio
async def test_an_ended_session_never_exported_is_dropped_and_export_says_why(tok):
    clock = Clock()
    state, http = proxy(tok, SessionLimits(idle_timeout_s=None, ended_ttl_s=120), clock)
    async with http:
        s = (await http.post("/rl/start_session", json={}, headers=ADMIN)).json()
        await http.post("/chat/completions", json=CHAT, headers=bearer(s["api_key"]))
        await http.post("/rl/end_session", json={}, headers=bearer(s["api_key"]))
        clock.now += 100
        state.sweep(force=True)
        assert s["session_id"] in state.sessions  # within the TTL the trainer may still export
        clock.now += 30
        state.sweep(force=True)
        assert s["session_id"] not in state.sessions
        export = await http.post(
            "/export_trajectories", json={"session_id": s["session_id"]}, headers=ADMIN
        )
        assert export.status_code == 404
        assert "SessionLimits.ended_ttl_s=120" in export.json()["error"]["message"]


@pytest.mark.asyncio
async def test_a_session_generating_for_longer_than_the_idle_timeout_is_kept(tok):
    clock = Clock()
    state, _ = proxy(tok, SessionLimits(idle_timeout_s=10), clock)
    session = state.start_session()
    session.in_flight = 1  # as during a long generation
    clock.now += 100
    assert state.sweep(force=True) == []
    session.in_flight = 0
    assert state.sweep(force=True) == [session.session_id]


@pytest.mark.asyncio
async def test_past_the_session_cap_start_session_is_a_429_naming_the_setting(tok):
    _, http = proxy(tok, SessionLimits(max_open_sessions=3))
    async with http:
        keys = [
            (await http.post("/rl/start_session", json={}, headers=ADMIN)).json() for _ in range(3)
        ]
        refused = await http.post("/rl/start_session", json={}, headers=ADMIN)
        assert refused.status_code == 429
        message = refused.json()["error"]["message"]
        assert "SessionLimits.max_open_sessions=3" in message and "3 sessions are open" in message
        await http.post("/export_trajectories", json={"session_id": keys[0]["session_id"]}, headers=ADMIN)  # fmt: skip
        assert (await http.post("/rl/start_session", json={}, headers=ADMIN)).status_code == 200


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"max_open_sessions": 0}, "max_open_sessions"),
        ({"max_open_sessions": 2.5}, "max_open_sessions"),
        ({"idle_timeout_s": -1}, "idle_timeout_s"),
        ({"ended_ttl_s": float("nan")}, "ended_ttl_s"),
    ],
)
def test_bad_session_limits_are_refused_by_name(kwargs, named):
    with pytest.raises(ValueError, match=f"SessionLimits.{named}"):
        SessionLimits(**kwargs)


def test_the_defaults_hold_a_cluster_run_and_bound_a_leak():
    limits = SessionLimits()
    assert limits.max_open_sessions is not None and limits.max_open_sessions >= 1000
    assert limits.idle_timeout_s is not None and limits.ended_ttl_s is not None


@pytest.mark.asyncio
@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
async def test_memory_comes_back_when_sessions_are_exported_or_dropped(tok, monkeypatch):
    # pytest keeps every log record it captures: the 300 drop warnings are not the proxy's.
    monkeypatch.setattr(logging.getLogger("areal_runtime.proxy"), "disabled", True)
    clock = Clock()
    state, http = proxy(tok, SessionLimits(idle_timeout_s=60), clock)
    n = 600
    async with http:
        warm = (await http.post("/rl/start_session", json={}, headers=ADMIN)).json()
        await http.post("/chat/completions", json=CHAT, headers=bearer(warm["api_key"]))
        await http.post("/export_trajectories", json={"session_id": warm["session_id"]}, headers=ADMIN)  # fmt: skip
        state.dropped.add("warm", "warm", "warm up the drop log")  # imports and caches first
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            sessions = []
            for _ in range(n):
                s = (await http.post("/rl/start_session", json={}, headers=ADMIN)).json()
                await http.post("/chat/completions", json=CHAT, headers=bearer(s["api_key"]))
                sessions.append(s)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            for s in sessions[: n // 2]:  # half exported
                r = await http.post("/export_trajectories", json={"session_id": s["session_id"]}, headers=ADMIN)  # fmt: skip
                assert r.status_code == 200
            clock.now += 61  # the other half dropped as idle
            state.sweep(force=True)
            del sessions, r, s
            state.engine.requests.clear()  # the scripted engine's own record of every request
            gc.collect()
            left = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert not state.sessions and not state._owner
    assert held > n * 2_000, held  # each session held a completion's worth of memory
    # What is left is the drop log's reasons (bounded), not the sessions.
    assert left < held * 0.2, (held, left)


@pytest.mark.asyncio
async def test_an_agent_proxy_episode_waiting_long_on_a_tool_keeps_its_session(tok):
    from areal_runtime.experimental.openai.proxy import AgentProxy

    clock = Clock()
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    limits = SessionLimits(idle_timeout_s=60)
    async with AgentProxy(engine, tok, session_limits=limits) as agent_proxy:
        agent_proxy.state.clock = clock
        async with agent_proxy.session() as episode:
            orphan = agent_proxy.state.start_session()  # started over HTTP, never exported
            clock.now += 3600  # the agent waits an hour on a tool
            assert agent_proxy.state.sweep(force=True) == [orphan.session_id]
            http = agent_proxy.http_client
            r = await http.post(
                "/chat/completions", json=CHAT, headers=bearer(episode.extra_kwargs["api_key"])
            )
            assert r.status_code == 200 and episode.completion_ids == [r.json()["id"]]
        assert agent_proxy.state.sessions == {}  # removed when the episode ended
