# SPDX-License-Identifier: Apache-2.0
"""What the agent never received is never trained on: disconnects abort and discard."""

import asyncio
import sys

import anthropic
import httpx
import openai
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy, ProxyState, create_proxy_app
from areal_runtime.models.tokenizers import tiny_tokenizer

BODIES = {
    "/v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "/v1/responses": {"model": "m", "input": "hi"},
    "/v1/messages": {
        "model": "m",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
    },
}


class GatedEngine:
    """A scripted engine whose answers wait for ``gate``; it counts cancelled requests."""

    def __init__(self, tok) -> None:
        self.inner = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
        self.gate = asyncio.Event()
        self.started = 0
        self.cancelled = 0
        self.finished = 0

    async def agenerate(self, req):
        self.started += 1
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.finished += 1
        return await self.inner.agenerate(req)


async def until(condition, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


@pytest.fixture
def tok():
    return tiny_tokenizer()


def body_of(path: str, stream: bool) -> dict:
    return {**BODIES[path], **({"stream": True} if stream else {})}


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("path", list(BODIES))
async def test_a_client_timeout_aborts_the_engine_and_records_nothing(tok, path, stream):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        headers = {"authorization": f"Bearer {s.extra_kwargs['api_key']}"}
        async with httpx.AsyncClient(base_url=proxy.base_url, headers=headers) as http:  # noqa: ARL302 - its own connection, to time out
            engine.gate.set()
            ok = await http.post(path, json=body_of(path, stream))
            assert ok.status_code == 200
            assert len(s.completion_ids) == 1
            engine.gate.clear()
            with pytest.raises(httpx.ReadTimeout):
                await http.post(path, json=body_of(path, stream), timeout=0.3)
            await until(lambda: engine.cancelled == 1)  # the engine's request was aborted
            assert engine.finished == 1
            assert len(s.completion_ids) == 1  # only the answer the agent got
            # A reward without an interaction_id goes to the last answer the agent received.
            reward = await http.post("/rl/set_reward", json={"interaction_id": None, "reward": 2})
            assert reward.status_code == 200, reward.text
    assert [item.reward for item in s.export().values()] == [2.0]


@pytest.mark.asyncio
async def test_the_openai_sdk_timing_out_and_retrying_trains_only_the_answer_it_got(tok):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        kw = s.extra_kwargs
        client = openai.AsyncOpenAI(
            base_url=kw["base_url"], api_key=kw["api_key"], timeout=1.0, max_retries=2
        )

        async def open_for_the_third_try() -> None:
            # On events, not a clock: an answer written just as its client's timer fired is in
            # the client's socket, a delivery no server can tell from a received one.
            await until(lambda: engine.cancelled == 2, timeout=30)
            engine.gate.set()

        opener = asyncio.ensure_future(open_for_the_third_try())
        answer = await client.chat.completions.create(
            model="m", messages=BODIES["/v1/chat/completions"]["messages"]
        )
        await opener
        await client.close()
        assert (engine.started, engine.cancelled, engine.finished) == (3, 2, 1)
        assert s.completion_ids == [answer.id]
        exported = s.export()
    assert list(exported) == [answer.id]


@pytest.mark.asyncio
async def test_a_killed_agent_process_aborts_its_request(tok):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        script = (
            "import httpx, sys; httpx.post(sys.argv[1] + '/v1/chat/completions', "
            "json={'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}, "
            "headers={'authorization': 'Bearer ' + sys.argv[2]}, timeout=60)"
        )
        agent = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, proxy.base_url, s.extra_kwargs["api_key"]
        )
        try:
            await until(lambda: engine.started == 1, timeout=30)
        finally:
            agent.kill()
            await agent.wait()
        await until(lambda: engine.cancelled == 1)
        assert s.completion_ids == []
        with pytest.raises(ValueError, match="nothing to reward"):
            s.set_rewards(1.0)


@pytest.mark.asyncio
async def test_an_inline_agent_cancelled_mid_request_aborts_it(tok):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="inline") as proxy, proxy.session() as s:
        client = openai.AsyncOpenAI(**s.extra_kwargs, max_retries=0)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(
                client.chat.completions.create(
                    model="m", messages=BODIES["/v1/chat/completions"]["messages"]
                ),
                0.2,
            )
        assert engine.cancelled == 1
        assert s.completion_ids == []


class FakeConnection:
    """An ASGI client that drops the connection once ``drop_after`` body messages arrived."""

    def __init__(self, body: bytes, drop_after: int) -> None:
        self.body = body
        self.drop_after = drop_after
        self.sent: list[dict] = []
        self.dropped = asyncio.Event()
        self._body_sent = False

    async def receive(self) -> dict:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.dropped.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        if self.dropped.is_set():
            return  # a closed connection swallows the bytes, as uvicorn does
        self.sent.append(message)
        bodies = [m for m in self.sent if m["type"] == "http.response.body"]
        if len(bodies) >= self.drop_after:
            self.dropped.set()


@pytest.mark.asyncio
@pytest.mark.parametrize("path", list(BODIES))
async def test_a_stream_cut_before_its_last_event_is_discarded(tok, path):
    import json

    engine = ScriptedEngine(["five is the answer"], tokenizer=tok, cycle=True)
    state = ProxyState(engine, tok)
    app = create_proxy_app(state)
    session = state.start_session()
    conn = FakeConnection(json.dumps(body_of(path, stream=True)).encode(), drop_after=1)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"authorization", f"Bearer {session.api_key}".encode())],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    await app(scope, conn.receive, conn.send)
    assert len(engine.requests) == 1  # it was generated ...
    assert list(session.completions) == []  # ... but never fully delivered, so not recorded
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    whole = FakeConnection(conn.body, drop_after=10**6)
    await app(scope, whole.receive, whole.send)
    assert len(session.completions.delivered_ids()) == 1


async def responses_call(kw, timeout):
    client = openai.AsyncOpenAI(
        base_url=kw["base_url"], api_key=kw["api_key"], timeout=timeout, max_retries=0
    )
    try:
        return (await client.responses.create(model="m", input="hi")).id
    finally:
        await client.close()


async def messages_call(kw, timeout):
    client = anthropic.AsyncAnthropic(
        base_url=kw["base_url"], api_key=kw["api_key"], timeout=timeout, max_retries=0
    )
    try:
        message = await client.messages.create(
            model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
        return message.id
    finally:
        await client.close()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("call", "timeout_error"),
    [(responses_call, openai.APITimeoutError), (messages_call, anthropic.APITimeoutError)],
    ids=["openai-responses", "anthropic-messages"],
)
async def test_sdk_timeouts_on_the_other_apis_train_only_what_was_received(
    tok, call, timeout_error
):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        engine.gate.set()
        received = await call(s.extra_kwargs, 30)
        engine.gate.clear()
        with pytest.raises(timeout_error):
            await call(s.extra_kwargs, 0.3)
        await until(lambda: engine.cancelled == 1)
        assert s.completion_ids == [received]
        s.set_rewards(1.0)  # a float reward: the last answer the agent received
        exported = s.export()
    assert {cid: item.reward for cid, item in exported.items()} == {received: 1.0}


@pytest.mark.asyncio
async def test_the_abort_reaches_an_engine_behind_the_sglang_compatible_server(tok):
    from areal_runtime.engine.local.server import serve
    from areal_runtime.engine.remote import RemoteEngine

    backend = GatedEngine(tok)
    server = await serve(backend)
    try:
        remote = RemoteEngine([server.address], tokenizer=tok, request_retries=1)
        async with AgentProxy(remote, tok, transport="socket") as proxy, proxy.session() as s:
            client = openai.AsyncOpenAI(
                base_url=proxy.base_url,
                api_key=s.extra_kwargs["api_key"],
                timeout=0.5,
                max_retries=0,
            )
            with pytest.raises(openai.APITimeoutError):
                await client.chat.completions.create(
                    model="m", messages=BODIES["/v1/chat/completions"]["messages"]
                )
            await client.close()
            # agent -> proxy -> RemoteEngine -> server -> engine: every hop cancelled.
            await until(lambda: backend.cancelled == 1)
            assert backend.finished == 0 and s.completion_ids == []
    finally:
        await server.close()


@pytest.mark.asyncio
async def test_every_sample_of_an_n_request_is_aborted_and_none_recorded(tok):
    engine = GatedEngine(tok)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        headers = {"authorization": f"Bearer {s.extra_kwargs['api_key']}"}
        async with httpx.AsyncClient(base_url=proxy.base_url, headers=headers) as http:  # noqa: ARL302 - its own connection, to time out
            body = {**BODIES["/v1/chat/completions"], "n": 3}
            with pytest.raises(httpx.ReadTimeout):
                await http.post("/v1/chat/completions", json=body, timeout=0.3)
            await until(lambda: engine.cancelled == 3)
            assert (
                s.completion_ids == []
                and list(proxy.state.sessions[s.session_id].completions) == []
            )
