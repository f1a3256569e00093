# SPDX-License-Identifier: Apache-2.0
"""RemoteEngine end to end: a LocalEngine served over SGLang's /generate in another process."""

import base64
import io
import subprocess
import sys

import pytest
import pytest_asyncio
from aiohttp import web

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.remote import RemoteEngine, ServerUnreachableError
from areal_runtime.engine.remote.backends import MalformedResponseError, VLLMBackend
from areal_runtime.utils.image import image2base64, pad_images_batch_to_max_size

from .conftest import request


@pytest.fixture(scope="module")
def sglang_server():
    """The default model served by a real subprocess; aborts each first answer after 2 tokens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "areal_runtime.engine.local.server", "--abort-every", "2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    assert line.startswith("listening on"), line
    yield line.split()[-1]
    proc.terminate()
    proc.wait(10)


@pytest.mark.asyncio
async def test_remote_matches_local_through_aborts(sglang_server, tok):
    remote = RemoteEngine([sglang_server], tokenizer=tok)
    req = request(tok, "What is 12+13?", max_new_tokens=8, greedy=True)
    got = await remote.agenerate(req)
    async with LocalEngine.default() as local:
        want = await local.agenerate(req)
    assert got.output_tokens == want.output_tokens and got.stop_reason == "stop"
    assert max(abs(a - b) for a, b in zip(got.output_logprobs, want.output_logprobs)) < 1e-5
    assert tok.decode(got.output_tokens_without_stop) == "25"


@pytest.mark.asyncio
async def test_unreachable_server_is_named():
    engine = RemoteEngine(["127.0.0.1:9"], request_retries=1, retry_backoff_s=0.01)
    with pytest.raises(ServerUnreachableError, match=r"127\.0\.0\.1:9/generate after 2 attempts"):
        await engine.agenerate(ModelRequest(input_ids=[1, 2], gconfig=GenerationHyperparameters()))


def test_round_robin_with_affinity():
    engine = RemoteEngine(["a:1", "b:2"], affinity_size=2)
    assert [engine.choose_server(r) for r in ("x", "y", "x", "y")] == ["a:1", "b:2", "a:1", "b:2"]
    engine.choose_server("z")  # evicts "x"
    assert engine.choose_server("x") == "b:2"
    with pytest.raises(ValueError, match="at least one server"):
        RemoteEngine([])
    with pytest.raises(ValueError, match="unknown backend"):
        RemoteEngine(["a:1"], backend="tgi")


class FakeServer:
    """A loopback aiohttp server whose handler a test scripts."""

    def __init__(self, handler):
        self.handler, self.calls = handler, []

    async def __aenter__(self):
        async def route(request):
            self.calls.append(await request.json())
            return await self.handler(request, len(self.calls))

        app = web.Application()
        app.router.add_post("/generate", route)
        app.router.add_post("/v1/completions", route)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.address = f"127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()


def sglang_answer(tokens, finish):
    return web.json_response(
        {
            "meta_info": {
                "output_token_logprobs": [[-0.5, t, None] for t in tokens],
                "finish_reason": {"type": finish},
            }
        }
    )


@pytest_asyncio.fixture
async def dropping_server():
    async def handler(request, n):
        if n == 1:  # drop the connection mid-request
            request.transport.close()
            raise ConnectionResetError
        if n == 2:
            return web.Response(status=503, text="warming up")
        return sglang_answer([7, 8], "stop")

    async with FakeServer(handler) as server:
        yield server


@pytest.mark.asyncio
async def test_dropped_connection_and_5xx_are_retried(dropping_server):
    engine = RemoteEngine([dropping_server.address], retry_backoff_s=0.01)
    resp = await engine.agenerate(
        ModelRequest(input_ids=[1, 2], gconfig=GenerationHyperparameters())
    )
    assert resp.output_tokens == [7, 8] and len(dropping_server.calls) == 3


@pytest.mark.asyncio
async def test_abort_resubmits_with_tokens_so_far_and_stamps_versions():
    engine = RemoteEngine(["placeholder:1"])

    async def handler(request, n):
        if n == 1:
            engine.set_version(1)  # weights change while the request is in flight
            return sglang_answer([5, 6], "abort")
        return sglang_answer([7], "stop")

    async with FakeServer(handler) as server:
        engine.addresses = [server.address]
        engine._round_robin = iter([server.address] * 4)
        g = GenerationHyperparameters(max_new_tokens=10)
        resp = await engine.agenerate(ModelRequest(input_ids=[1, 2], gconfig=g))
    assert resp.output_tokens == [5, 6, 7] and resp.stop_reason == "stop"
    assert resp.output_versions == [0, 0, 1]
    assert server.calls[1]["input_ids"] == [1, 2, 5, 6]
    assert server.calls[1]["sampling_params"]["max_new_tokens"] == 8


@pytest.mark.asyncio
async def test_vllm_payload_and_response():
    async def handler(request, n):
        return web.json_response(
            {
                "choices": [
                    {
                        "finish_reason": "length",
                        "logprobs": {
                            "tokens": ["token_id:9", "token_id:4"],
                            "token_logprobs": [-0.1, -0.2],
                        },
                    }
                ]
            }
        )

    async with FakeServer(handler) as server:
        engine = RemoteEngine([server.address], backend="vllm")
        g = GenerationHyperparameters(max_new_tokens=2, greedy=True, stop=["x"])
        resp = await engine.agenerate(ModelRequest(input_ids=[3], gconfig=g))
    body = server.calls[0]
    assert body["prompt"] == [3] and body["max_tokens"] == 2 and body["temperature"] == 0.0
    assert body["return_tokens_as_token_ids"] is True and body["stop"] == ["x"]
    assert resp.output_tokens == [9, 4] and resp.output_logprobs == [-0.1, -0.2]
    assert resp.stop_reason == "length"
    with pytest.raises(MalformedResponseError, match="vLLM"):
        VLLMBackend().parse({"choices": []})


@pytest.mark.asyncio
async def test_in_process_sglang_server_round_trip(random_model, tok):
    async with LocalEngine(random_model, tok) as local:
        server = await local.serve_sglang()
        try:
            remote = RemoteEngine([server.address])
            resp = await remote.agenerate(
                ModelRequest(
                    input_ids=[1, 2, 3],
                    gconfig=GenerationHyperparameters(max_new_tokens=4, greedy=True),
                )
            )
            assert resp.output_len == 4 and resp.stop_reason == "length"
            with pytest.raises(
                ValueError, match=r"refused the request: HTTP 400.*outside the vocab"
            ):
                await remote.agenerate(
                    ModelRequest(input_ids=[600], gconfig=GenerationHyperparameters())
                )
        finally:
            await server.close()


@pytest.mark.asyncio
async def test_images_reach_sglang_as_base64_on_every_resubmission():
    from PIL import Image

    picture = Image.new("RGB", (3, 2), (255, 0, 0))

    async def handler(request, n):
        return sglang_answer([5], "abort") if n == 1 else sglang_answer([7], "stop")

    async with FakeServer(handler) as server:
        engine = RemoteEngine([server.address])
        g = GenerationHyperparameters(max_new_tokens=4)
        req = ModelRequest(input_ids=[1], gconfig=g, image_data=[picture, "aGVsbG8="])
        resp = await engine.agenerate(req)
    first, second = server.calls
    assert first["image_data"] == second["image_data"] == image2base64([picture, "aGVsbG8="])
    decoded = Image.open(io.BytesIO(base64.b64decode(first["image_data"][0])))
    assert decoded.size == (3, 2) and decoded.getpixel((0, 0)) == (255, 0, 0)
    assert first["image_data"][1] == "aGVsbG8="  # already encoded: passed through
    assert resp.input_images == [picture, "aGVsbG8="]


@pytest.mark.asyncio
async def test_vllm_refuses_images_instead_of_dropping_them():
    engine = RemoteEngine(["127.0.0.1:1"], backend="vllm")
    g = GenerationHyperparameters(max_new_tokens=2)
    with pytest.raises(ValueError, match=r"takes no images.*SGLang"):
        await engine.agenerate(ModelRequest(input_ids=[3], gconfig=g, image_data=["aGVsbG8="]))


def test_image_helpers():
    from PIL import Image

    with pytest.raises(TypeError, match="PIL images or base64 strings, got int"):
        image2base64([3])
    small, large = Image.new("RGB", (2, 2), (9, 9, 9)), Image.new("RGB", (4, 6))
    padded = pad_images_batch_to_max_size([small, large])
    assert [p.size for p in padded] == [(4, 6), (4, 6)]
    assert padded[0].getpixel((1, 2)) == (9, 9, 9) and padded[0].getpixel((0, 0)) == (0, 0, 0)
    assert image2base64(small) == image2base64([small])
