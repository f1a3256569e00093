# SPDX-License-Identifier: Apache-2.0
"""The SGLang-compatible engine server on its old stack (aiohttp) and its new one (starlette).

Why: the engine server (``engine/local/server.py``) moved from aiohttp to starlette on uvicorn,
the proxy's stack and host, with the proxy's body reader and disconnect watch. This measures
what a request costs on each: the server of ``--baseline REF`` (default ``8134223``, the last
commit whose server was aiohttp's, loaded from git) beside this tree's, each started by its
own ``serve()``, answering the same ``/generate`` body from the scripted engine, on a loopback
socket, from the same ``aiohttp`` client with keep-alive (the engine client the remote engine
uses). Rows alternate round by round in one process, so load on the machine hits both.

* ``sequential``: the median latency of one request at a time;
* ``concurrent``: the wall time of ``--concurrency`` requests at once, as requests per second.

Run: ``PYTHONPATH=benchmarks python benchmarks/bench_http_stacks.py [--baseline REF]
[--requests 400] [--concurrency 64] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import types

import aiohttp
import torch
from _util import module_at, table

from areal_runtime.engine.local import server as this_server
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.models.tokenizers import tiny_tokenizer

BODY = {"input_ids": list(range(5, 69)), "sampling_params": {"max_new_tokens": 4}}
LAST_AIOHTTP_SERVER = "8134223"


def load_revision(ref: str) -> types.ModuleType:
    """``server.py`` as it was at ``ref``."""
    return module_at(ref, "areal_runtime/engine/local/server.py")


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


async def main(baseline: str, requests: int, concurrency: int, rounds: int) -> None:
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["ok"], tokenizer=tok, cycle=True)
    servers = {
        f"aiohttp ({baseline})": await load_revision(baseline).serve(engine),
        "starlette (this tree)": await this_server.serve(engine),
    }
    urls = {name: f"http://{server.address}/generate" for name, server in servers.items()}
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
    for server in servers.values():
        await server.close()
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
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=LAST_AIOHTTP_SERVER, help="git revision")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.baseline, args.requests, args.concurrency, args.rounds))
