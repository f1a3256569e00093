# SPDX-License-Identifier: Apache-2.0
"""The same ``/generate`` request on the two server stacks: aiohttp and starlette + uvicorn.

Why: the local engine server (``engine/local/server.py``) is served by aiohttp and the proxy by
starlette on uvicorn. Whether one stack could serve both is partly a question of cost per
request. Both rows answer the same body with the same handler work (the server's own
``decode_body`` and ``parse_generate``, the scripted engine's ``agenerate``, the same JSON), on a
loopback socket, from the same ``aiohttp`` client with keep-alive (the engine client the remote
engine uses). Rows alternate round by round in one process, so load on the machine hits both.

* ``sequential``: the median latency of one request at a time;
* ``concurrent``: the wall time of ``--concurrency`` requests at once, as requests per second.

Run: ``python benchmarks/bench_http_stacks.py [--requests 400] [--concurrency 64] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import aiohttp
import torch
from _util import table

from areal_runtime.api import ModelRequest
from areal_runtime.engine.local.server import (
    GenerateRequestError,
    decode_body,
    generate_answer,
    parse_generate,
)
from areal_runtime.engine.local.server import serve as serve_aiohttp
from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.utils.listening_socket import bound_port, tcp_listening_socket

BODY = {"input_ids": list(range(5, 69)), "sampling_params": {"max_new_tokens": 4}}


async def serve_starlette(engine: Any) -> tuple[str, Any, asyncio.Task]:
    """The same handler work as ``create_app``'s ``/generate``, on starlette and uvicorn."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    limits = RequestLimits()

    async def generate(request: Request) -> JSONResponse:
        try:
            input_ids, g = parse_generate(decode_body(await request.body(), limits), limits)
        except GenerateRequestError as exc:
            return JSONResponse({"error": str(exc), "field": exc.field}, status_code=exc.status)
        resp = await engine.agenerate(ModelRequest(input_ids=input_ids, gconfig=g))
        return JSONResponse(generate_answer(resp, resp.stop_reason))

    app = Starlette(routes=[Route("/generate", generate, methods=["POST"])])
    sock = tcp_listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    return f"127.0.0.1:{bound_port(sock)}", server, task


async def sequential(http: aiohttp.ClientSession, url: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        async with http.post(url, json=BODY) as reply:
            assert reply.status == 200, await reply.text()
            await reply.read()
        times.append(time.perf_counter() - start)
    return times


async def concurrent(http: aiohttp.ClientSession, url: str, n: int) -> float:
    async def one() -> None:
        async with http.post(url, json=BODY) as reply:
            assert reply.status == 200, await reply.text()
            await reply.read()

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return n / (time.perf_counter() - start)


async def main(requests: int, concurrency: int, rounds: int) -> None:
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["ok"], tokenizer=tok, cycle=True)
    aio = await serve_aiohttp(engine)
    star_addr, star_server, star_task = await serve_starlette(engine)
    urls = {
        "aiohttp": f"http://{aio.address}/generate",
        "starlette": f"http://{star_addr}/generate",
    }
    latency: dict[str, list[float]] = {name: [] for name in urls}
    rates: dict[str, list[float]] = {name: [] for name in urls}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        for url in urls.values():  # warm-up: connections, imports, first-call paths
            await sequential(http, url, 20)
            await concurrent(http, url, concurrency)
        for i in range(rounds):
            order = list(urls) if i % 2 == 0 else list(reversed(urls))
            for name in order:
                latency[name] += await sequential(http, urls[name], requests // rounds)
                rates[name].append(await concurrent(http, urls[name], concurrency))
    star_server.should_exit = True
    await star_task
    await aio.close()
    rows = [
        [
            name,
            f"{statistics.median(latency[name]) * 1e3:.2f}",
            f"{statistics.quantiles(latency[name], n=10)[-1] * 1e3:.2f}",
            f"{statistics.median(rates[name]):.0f}",
        ]
        for name in urls
    ]
    headers = ["server", "median ms (sequential)", "p90 ms", f"req/s ({concurrency} at once)"]
    print(table(headers, rows))


if __name__ == "__main__":
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.concurrency, args.rounds))
