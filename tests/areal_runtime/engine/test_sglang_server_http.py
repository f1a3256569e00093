# SPDX-License-Identifier: Apache-2.0
"""The SGLang-compatible server's HTTP edge on a real socket: body cap and disconnects.

A body over the cap is refused before the rest of it is sent (so the server never holds it),
and a client that leaves while its request generates aborts the engine call and frees its slot
in the batch, as SGLang does.
"""

import asyncio
import json

import aiohttp
import pytest

from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.local.server import ServerLimits, serve
from areal_runtime.engine.scripted import ScriptedEngine

from .conftest import tiny_qwen3

LIMITS = ServerLimits(max_body_bytes=64 * 1024)


async def until(condition, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def answer_to(address: str, head: bytes, body_part: bytes) -> tuple[int, dict]:
    """Send ``head`` and only ``body_part`` of the body, then read the whole answer."""
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head + body_part)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout=10)  # the server closes after it
    finally:
        writer.close()
    status_line, _, rest = raw.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(payload)


@pytest.mark.asyncio
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_body_over_the_cap_is_a_413_before_the_rest_is_sent(tok, framing):
    server = await serve(ScriptedEngine(["hi"], tokenizer=tok, cycle=True), limits=LIMITS)
    try:
        start = b'{"input_ids": [1], "rid": "' + b"x" * 4096
        if framing == "content-length":
            declared = LIMITS.max_body_bytes * 100
            head = f"POST /generate HTTP/1.1\r\nhost: x\r\ncontent-length: {declared}\r\n\r\n"
            sent = start
        else:  # chunks past the cap, and never the last chunk
            head = "POST /generate HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
            chunk = b"%x\r\n%s\r\n" % (len(start), start)
            sent = chunk * (LIMITS.max_body_bytes // len(start) + 2)
        status, answer = await answer_to(server.address, head.encode(), sent)
    finally:
        await server.close()
    assert status == 413 and answer["field"] == "body"
    assert str(LIMITS.max_body_bytes) in answer["error"]


class CancelSpy:
    """The engine the server calls; counts engine calls that ended cancelled."""

    def __init__(self, inner: LocalEngine) -> None:
        self.inner = inner
        self.cancelled = 0
        self.finished = 0

    async def agenerate(self, req):
        try:
            resp = await self.inner.agenerate(req)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.finished += 1
        return resp


@pytest.fixture(scope="module")
def long_model():
    """A tiny random model with room for thousands of new tokens (seconds of decoding)."""
    return tiny_qwen3(16384, seed=0)


@pytest.mark.asyncio
async def test_a_client_that_disconnects_aborts_its_generation_and_frees_its_slot(long_model, tok):
    long = {
        "input_ids": [1, 2, 3],
        "sampling_params": {"max_new_tokens": 16000, "ignore_eos": True},
    }
    short = {"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 3, "ignore_eos": True}}
    async with LocalEngine(long_model, tok, max_batch=1) as local:
        engine = CancelSpy(local)
        server = await serve(engine)
        try:
            async with aiohttp.ClientSession(base_url=server.base_url) as http:  # noqa: ARL302 - its own connection, to drop
                call = asyncio.ensure_future(http.post("/generate", json=long))
                await until(lambda: local.running == 1)
                call.cancel()  # the client goes away: aiohttp closes the connection
                with pytest.raises(asyncio.CancelledError):
                    await call
            await until(lambda: engine.cancelled == 1)
            await until(lambda: local.running == 0)
            assert engine.finished == 0
            async with (
                aiohttp.ClientSession(base_url=server.base_url) as http,  # noqa: ARL302 - one request
                http.post("/generate", json=short) as reply,
            ):
                assert reply.status == 200, await reply.text()
                meta = (await reply.json())["meta_info"]
            assert meta["completion_tokens"] == 3 and engine.finished == 1
        finally:
            await server.close()
