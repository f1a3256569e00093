# SPDX-License-Identifier: Apache-2.0
"""Hostile input for every route of the agent proxy, driven in-process over ASGI.

Each example starts a proxy with two sessions that each made a completion, sends one hostile
request as session A (or the admin), then checks: no 5xx, no traceback logged, a 4xx names the
field it refuses, session B is untouched, session A still works, no engine call is left over.
The app runs as ``areal-devkit serve`` runs it, inside its request log, which must log each
request in one line whatever its body.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from areal_devkit.serving.request_log import RequestLog
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import ProxyLimits, ProxyState, create_proxy_app
from areal_runtime.experimental.openai.proxy.server import answer_json
from areal_runtime.models.tokenizers import tiny_tokenizer

from .harness import assert_answer, assert_no_tracebacks, error_message, watched
from .strategies import JSON, Mutation, encode, examples, near_valid

TOK = tiny_tokenizer()
ADMIN = "admin-key"
HI = [{"role": "user", "content": "hi"}]
# Small limits, so that generated bodies reach every limit cheaply.
SMALL = ProxyLimits(
    max_body_bytes=16 * 1024,
    max_depth=16,
    max_string_chars=2048,
    max_messages=8,
    max_new_tokens=64,
    max_n=3,
    max_stop=4,
    max_tools=4,
)
A_CID, A_SID = "@A_CID", "@A_SID"  # placeholders for ids known once the proxy runs

ADMIN_ROUTES = {"/grant_capacity", "/rl/start_session", "/export_trajectories"}


@dataclass
class Outcome:
    status: int
    text: str
    state: ProxyState


def _session_view(state: ProxyState, session_id: str) -> str:
    """Everything of one session a hostile request of another must not change."""
    s = state.sessions[session_id]
    items = [
        (cid, item.reward, json.dumps(answer_json(item), sort_keys=True), repr(item.messages))
        for cid, item in s.completions.items()
    ]
    return repr((s.api_key, s.is_completed, s.warnings, items))


async def _scenario(
    method: str, path: str, body: bytes | None, who: str, headers: dict[str, str]
) -> Outcome:
    engine = ScriptedEngine(["hello there"], tokenizer=TOK, cycle=True)
    state = ProxyState(engine, TOK, admin_api_key=ADMIN, limits=SMALL)
    log: list[str] = []
    records: list[dict[str, Any]] = []
    app = RequestLog(create_proxy_app(state), log.append, records.append)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as http:

        async def start(task: int) -> dict[str, str]:
            r = await http.post("/rl/start_session", json={"task_id": task}, headers=_auth(ADMIN))
            return r.json()

        async def chat(key: str) -> httpx.Response:
            return await http.post("/chat/completions", json={"messages": HI}, headers=_auth(key))

        a, b = await start(1), await start(2)
        a_cid = (await chat(a["api_key"])).json()["id"]
        assert (await chat(b["api_key"])).status_code == 200
        # The session whose key did not send the request is the one that must not change.
        bystander = a if who == "other" else b
        b_before = _session_view(state, bystander["session_id"])
        if body is not None:
            body = body.replace(encode(A_CID), encode(a_cid)).replace(
                encode(A_SID), encode(a["session_id"])
            )
        key = {"admin": ADMIN, "own": a["api_key"], "other": b["api_key"]}.get(who, who)
        resp = await http.request(
            method,
            path.replace("{cid}", quote(a_cid)),
            content=body,
            headers={**(_auth(key) if key else {}), **headers},
        )
        # The log has one line (and one record) per request, the hostile one included.
        assert len(log) == len(records) == 5, log
        assert f" {method} {records[-1]['path']} {resp.status_code} " in log[-1], log[-1]
        # The bystander is untouched whatever the other session or the admin sent.
        assert _session_view(state, bystander["session_id"]) == b_before
        # Session A still works unless the request ended or exported it.
        if a["session_id"] in state.sessions and not state.sessions[a["session_id"]].is_completed:
            again = await chat(a["api_key"])
            assert again.status_code == 200, again.text
        # Every engine call finished: nothing is left running on the loop.
        leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not leftover, leftover
    return Outcome(resp.status_code, resp.text, state)


def run(
    method: str,
    path: str,
    body: bytes | None = None,
    who: str = "own",
    headers: dict[str, str] | None = None,
) -> Outcome:
    """One hostile request in a fresh proxy; fails on any traceback in logs or stderr."""
    with watched() as watch:
        outcome = asyncio.run(
            _scenario(
                method, path, body, who, {"content-type": "application/json", **(headers or {})}
            )
        )
    assert_no_tracebacks(watch)
    if outcome.status == 200 and outcome.text.startswith(("data:", "event:")):
        _check_stream(outcome.text)
    return outcome


def _auth(key: str) -> dict[str, Any]:
    """The key as a header; a non-ASCII key is sent as its UTF-8 bytes, as a raw client would."""
    return {"Authorization": b"Bearer " + key.encode("utf-8", "surrogatepass")}


def _check_stream(text: str) -> None:
    """A streamed answer is a complete, well-formed event stream."""
    data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert data, text
    for item in data:
        if item != "[DONE]":
            json.loads(item)


def who_for(path: str) -> str:
    return "admin" if path in ADMIN_ROUTES else "own"


# --- regression tests: each finding of the fuzz suite, as a plain example ---------------------

CHAT_FINDINGS = [
    # (body, status, a name the message must hold); each was a 500 or silently accepted.
    ({"messages": HI, "temperature": -1}, "temperature"),  # engine ValueError: 500
    ({"messages": HI, "top_p": 5}, "top_p"),  # 500
    ({"messages": HI, "stop": [""]}, "stop"),  # 500
    ({"messages": [{"role": ["user"], "content": "x"}]}, "role"),  # unhashable: 500
    ({"messages": [{"role": "user", "content": [{"text": 5}]}]}, "content[0]"),  # join: 500
    ({"messages": HI, "n": True}, "'n'"),  # was 1 completion
    ({"messages": HI, "max_tokens": True}, "max_tokens"),  # was 1 token
    ({"messages": HI, "logprobs": "yes"}, "logprobs"),  # was bool("yes")
    ({"messages": HI, "n": 10**6}, "'n'"),  # hung generating a million answers
    ({"messages": HI, "max_tokens": 10**12}, "max_tokens"),
    ({"messages": HI, "frequency_penalty": 10}, "frequency_penalty"),
    ({"messages": HI * 9}, "messages"),  # over max_messages
    ({"messages": HI, "stop": ["a"] * 5}, "stop"),
]


@pytest.mark.parametrize(("body", "named"), CHAT_FINDINGS, ids=[n for _, n in CHAT_FINDINGS])
def test_chat_findings_are_a_400_naming_the_field(body: dict[str, Any], named: str) -> None:
    out = run("POST", "/chat/completions", encode(body))
    assert out.status == 400 and named in error_message(out.text), out.text


@pytest.mark.parametrize(
    ("path", "body", "named"),
    [
        ("/v1/responses", {"input": [{"role": ["x"]}]}, "role"),  # unhashable: 500
        (
            "/v1/responses",
            {"input": [{"type": "function_call_output", "call_id": ["c"], "output": "x"}]},
            "call_id",
        ),  # unhashable: 500
        ("/v1/responses", {"input": "hi", "metadata": float("nan")}, "metadata"),  # echo: 500
        ("/v1/responses", {"input": "hi", "max_output_tokens": True}, "max_output_tokens"),
        (
            "/v1/messages",
            {
                "max_tokens": 5,
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ["a"]}]}
                ],
            },
            "tool_use_id",
        ),  # unhashable: 500
        ("/v1/messages", {"max_tokens": 10**9, "messages": HI}, "max_tokens"),
        ("/rl/set_reward", {"reward": 1, "interaction_id": ["x"]}, "interaction_id"),  # 500
        ("/rl/set_reward", {"reward": 1, "interaction_id": 5}, "interaction_id"),  # 500
        ("/rl/set_reward", {"reward": float("nan")}, "reward"),  # stored NaN
        ("/rl/set_reward", {"reward": 10**400}, "reward"),  # overflowed at export
        ("/rl/set_reward", {"reward": 1, "interaction_id": "nope"}, "interaction_id"),
        ("/export_trajectories", {"session_id": ["x"]}, "session_id"),  # unhashable: 500
        ("/export_trajectories", {"session_id": A_SID, "discount": "x"}, "discount"),  # 500
        ("/export_trajectories", {"session_id": A_SID, "discount": float("nan")}, "discount"),
        ("/export_trajectories", {"session_id": A_SID, "style": "bogus"}, "style"),  # 500
    ],
)
def test_route_findings_are_a_400_naming_the_field(path: str, body: Any, named: str) -> None:
    out = run("POST", path, encode(body), who=who_for(path))
    assert out.status == 400 and named in error_message(out.text), out.text


def test_a_bad_export_style_leaves_the_session_exportable() -> None:
    """Found: a bad style applied the discount first, so the retry was a 500 (discounted)."""

    async def scenario() -> list[int]:
        state = ProxyState(
            ScriptedEngine(["x"], tokenizer=TOK, cycle=True), TOK, admin_api_key=ADMIN
        )
        transport = httpx.ASGITransport(app=create_proxy_app(state))
        async with httpx.AsyncClient(transport=transport, base_url="http://p") as http:
            s = (await http.post("/rl/start_session", json={}, headers=_auth(ADMIN))).json()
            await http.post("/chat/completions", json={"messages": HI}, headers=_auth(s["api_key"]))
            statuses = []
            for style in ("bogus", "individual"):
                body = {"session_id": s["session_id"], "discount": 0.5, "style": style}
                r = await http.post("/export_trajectories", json=body, headers=_auth(ADMIN))
                statuses.append(r.status_code)
            return statuses

    assert asyncio.run(scenario()) == [400, 200]


def test_deeply_nested_json_is_a_400() -> None:
    """Found: json's RecursionError was a 500."""
    out = run("POST", "/chat/completions", b"[" * 5000 + b"]" * 5000)
    assert out.status == 400 and "nested" in error_message(out.text)


def test_an_oversized_body_is_a_413() -> None:
    out = run("POST", "/chat/completions", b" " * (SMALL.max_body_bytes + 1))
    assert out.status == 413 and str(SMALL.max_body_bytes) in error_message(out.text)


def test_a_string_over_the_limit_is_named() -> None:
    body = {"messages": [{"role": "user", "content": "x" * (SMALL.max_string_chars + 1)}]}
    out = run("POST", "/chat/completions", encode(body))
    assert out.status == 400 and "messages[0].content" in error_message(out.text)


def test_the_default_limits_leave_room_for_real_agents() -> None:
    limits = ProxyLimits()
    assert limits.max_body_bytes >= 4 * 1024 * 1024 and limits.max_messages >= 512
    assert limits.max_new_tokens >= 16384 and limits.max_n >= 8


# --- properties -------------------------------------------------------------------------------

TEXT = st.text(min_size=1, max_size=20)
chat_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "assistant"]), "content": TEXT}
    ),
    min_size=1,
    max_size=3,
)
chat_tool = st.just(
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        },
    }
)
SAMPLING = {
    "temperature": st.floats(0, 2),
    "top_p": st.floats(0.01, 1),
}
chat_bodies = st.fixed_dictionaries(
    {"messages": chat_messages},
    optional={
        **SAMPLING,
        "max_tokens": st.integers(1, 64),
        "n": st.integers(1, 3),
        "stop": st.lists(TEXT, max_size=3),
        "stream": st.booleans(),
        "logprobs": st.booleans(),
        "tools": st.lists(chat_tool, max_size=1),
        "top_k": st.integers(1, 40),
        "frequency_penalty": st.floats(-2, 2),
        "seed": st.integers(),
        "model": TEXT,
    },
)
responses_bodies = st.fixed_dictionaries(
    {
        "input": st.one_of(
            TEXT,
            st.lists(
                st.fixed_dictionaries(
                    {"role": st.sampled_from(["user", "system", "developer"]), "content": TEXT}
                ),
                min_size=1,
                max_size=3,
            ),
        )
    },
    optional={
        **SAMPLING,
        "instructions": TEXT,
        "max_output_tokens": st.integers(1, 64),
        "stream": st.booleans(),
        "tools": st.just([{"type": "function", "name": "add", "parameters": {"type": "object"}}]),
        "model": TEXT,
    },
)
messages_bodies = st.fixed_dictionaries(
    {
        "max_tokens": st.integers(1, 64),
        "messages": st.lists(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "assistant"]),
                    "content": st.one_of(TEXT, st.just([{"type": "text", "text": "hi"}])),
                }
            ),
            min_size=1,
            max_size=3,
        ),
    },
    optional={
        **SAMPLING,
        "system": TEXT,
        "stop_sequences": st.lists(TEXT, max_size=3),
        "stream": st.booleans(),
        "tools": st.just([{"name": "add", "input_schema": {"type": "object"}}]),
        "model": TEXT,
    },
)
ROUTE_BODIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "/chat/completions": chat_bodies,
    "/v1/chat/completions": chat_bodies,
    "/v1/responses": responses_bodies,
    "/responses": responses_bodies,
    "/v1/messages": messages_bodies,
    "/rl/set_reward": st.fixed_dictionaries(
        {"reward": st.floats(-10, 10)}, optional={"interaction_id": st.just(A_CID)}
    ),
    "/rl/end_session": st.just({}),
    "/rl/start_session": st.fixed_dictionaries({}, optional={"task_id": st.integers(0, 9)}),
    "/export_trajectories": st.fixed_dictionaries(
        {"session_id": st.just(A_SID)},
        optional={"discount": st.floats(0, 1), "style": st.just("individual")},
    ),
    "/grant_capacity": st.just({}),
}
ROUTES = sorted(ROUTE_BODIES)


@settings(max_examples=examples(40))
@given(st.sampled_from(ROUTES).flatmap(lambda p: st.tuples(st.just(p), ROUTE_BODIES[p])))
def test_valid_bodies_succeed_on_every_route(case: tuple[str, dict[str, Any]]) -> None:
    path, body = case
    out = run("POST", path, encode(body), who=who_for(path))
    assert out.status == 200, out.text


@settings(max_examples=examples(200))
@given(
    st.sampled_from(ROUTES).flatmap(lambda p: st.tuples(st.just(p), near_valid(ROUTE_BODIES[p])))
)
def test_near_valid_bodies_are_served_or_refused_by_field(case: tuple[str, Mutation]) -> None:
    path, mutation = case
    out = run("POST", path, encode(mutation.body), who=who_for(path))
    assert_answer(out.status, out.text, None if out.status == 413 else mutation.names)


@settings(max_examples=examples(60))
@given(st.sampled_from(ROUTES), st.one_of(JSON.map(encode), st.binary(max_size=300)))
def test_arbitrary_bytes_never_break_a_route(path: str, body: bytes) -> None:
    out = run("POST", path, body, who=who_for(path))
    assert_answer(out.status, out.text)


@settings(max_examples=examples(30))
@given(
    st.sampled_from([*ROUTES, "/chat/completions/{cid}", "/v1/chat/completions/{cid}"]),
    st.one_of(st.sampled_from(["own", "other", "admin", ""]), st.text(max_size=30)),
    st.sampled_from(["GET", "POST", "PUT"]),
)
def test_any_key_and_method_is_a_4xx_at_worst(path: str, who: str, method: str) -> None:
    """Wrong keys, other sessions' keys and wrong methods are refused, never a crash."""
    body = None if method == "GET" else encode({})
    who = "".join(c for c in who if c.isprintable()).strip()  # a header holds no controls
    out = run(method, path, body, who=who)
    assert_answer(out.status, out.text)


@settings(max_examples=examples(20))
@given(st.text(max_size=40))
def test_get_completion_with_any_id_is_a_4xx_at_worst(cid: str) -> None:
    out = run("GET", "/chat/completions/" + quote(cid, safe=""), None)
    assert_answer(out.status, out.text)


@pytest.mark.parametrize("path", sorted(ADMIN_ROUTES))
def test_a_non_ascii_key_on_an_admin_route_is_a_401(path: str) -> None:
    """Found: secrets.compare_digest raised TypeError on a non-ASCII key: a 500."""
    out = run("POST", path, encode({}), who="¡é")
    assert out.status == 401 and "admin key" in error_message(out.text)


@pytest.mark.parametrize(
    "body",
    [
        b'{"input": "hi", "metadata": {"k": "\\ud800"}}',  # echoed: JSONResponse raised
        b'{"input": "hi", "\\ud800": NaN}',  # the error message could not be encoded
    ],
)
def test_an_unpaired_surrogate_is_a_400(body: bytes) -> None:
    """Found: a lone surrogate made the answer (or the error naming it) unencodable: a 500."""
    out = run("POST", "/v1/responses", body)
    assert out.status == 400 and "surrogate" in error_message(out.text), out.text


@pytest.mark.parametrize(("method", "path"), [("GET", "/v1/messages"), ("POST", "/nope")])
def test_unknown_routes_and_methods_answer_json(method: str, path: str) -> None:
    """Found: Starlette's plain-text 404/405 bodies; the SDKs expect a JSON error."""
    out = run(method, path, None if method == "GET" else encode({}))
    assert out.status in (404, 405) and path in error_message(out.text)
