# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit serve``'s own costs: the request log per request, and the session file.

1. One chat completion through the proxy over TCP (real ``AsyncOpenAI``, zero-latency scripted
   engine), with and without the ``RequestLog`` wrapper (and with ``--log-requests``' file),
   interleaved request by request; medians and the overhead.
2. ``SessionFile.write()`` for sessions holding 1,000 completions (a periodic save runs on
   the event loop, so this is how long the proxy pauses), and the skipped unchanged save.

Run: ``PYTHONPATH=benchmarks .venv/bin/python benchmarks/bench_serve.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from _util import table
from openai import AsyncOpenAI

from areal_devkit.serving.request_log import RequestFile, RequestLog
from areal_devkit.serving.session_file import SessionFile
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.models.tokenizers import tiny_tokenizer

ROUNDS = 300
COMPLETIONS = 1000
ANSWER = "The answer is " + "forty two and " * 20  # about 300 tokens with the tiny tokenizer


async def started(tokenizer: Any, wrap: str, tmp: Path) -> tuple[AgentProxy, AsyncOpenAI, Any]:
    proxy = AgentProxy(
        ScriptedEngine(["5"], tokenizer=tokenizer, cycle=True), tokenizer, transport="socket"
    )
    stack: Any = None
    if wrap != "plain":
        record = None
        if wrap == "log + file":
            stack = RequestFile(tmp / "requests.jsonl")
            record = stack
        proxy.app = RequestLog(proxy.app, lambda line: None, record)
    await proxy.__aenter__()
    session = proxy.state.start_session("bench")
    client = AsyncOpenAI(base_url=f"{proxy.base_url}/v1", api_key=session.api_key, max_retries=0)
    return proxy, client, stack


async def request_latency(tokenizer: Any, tmp: Path) -> list[list[object]]:
    kinds = ["plain", "log", "log + file"]
    servers = {k: await started(tokenizer, k, tmp) for k in kinds}
    times: dict[str, list[float]] = {k: [] for k in kinds}
    messages = [{"role": "user", "content": "What is 2+3?"}]
    for round_ in range(ROUNDS + 20):
        for kind in kinds:
            client = servers[kind][1]
            start = time.perf_counter()
            await client.chat.completions.create(model="m", messages=messages, max_tokens=4)
            if round_ >= 20:  # warm-up rounds
                times[kind].append(time.perf_counter() - start)
    for proxy, client, stack in servers.values():
        await client.close()
        await proxy.__aexit__(None, None, None)
        if stack is not None:
            stack.__exit__(None, None, None)
    base = statistics.median(times["plain"])
    rows = []
    for kind in kinds:
        median = statistics.median(times[kind])
        rows.append([kind, f"{median * 1000:.2f}", f"{(median - base) * 1000:+.2f}"])
    return rows


async def session_file_times(tokenizer: Any, tmp: Path) -> list[list[object]]:
    engine = ScriptedEngine([ANSWER], tokenizer=tokenizer, cycle=True)
    async with AgentProxy(engine, tokenizer) as proxy:
        for index in range(10):  # 10 sessions x 100 completions
            session = proxy.state.start_session(f"s{index}")
            client = AsyncOpenAI(
                base_url=proxy.base_url, api_key=session.api_key, http_client=proxy.http_client
            )
            for _ in range(COMPLETIONS // 10):
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "What is 2+3?"}]
                )
        tokens = sum(
            s.completions[c].model_response.input_len + s.completions[c].model_response.output_len
            for s in proxy.state.sessions.values()
            for c in s.completions
        )
        first, one_new, unchanged = [], [], []
        last = proxy.state.sessions[next(reversed(proxy.state.sessions))]
        for round_ in range(5):
            fresh = SessionFile(proxy.state, tmp / "sessions.jsonl")  # nothing cached yet
            start = time.perf_counter()
            fresh.write()
            first.append(time.perf_counter() - start)
            last.completions.set_reward(
                last.completions.last_interaction_id, float(round_)
            )  # one session changes
            start = time.perf_counter()
            fresh.write()
            one_new.append(time.perf_counter() - start)
            start = time.perf_counter()
            fresh.write()
            unchanged.append(time.perf_counter() - start)
        size = (tmp / "sessions.jsonl").stat().st_size
    return [
        [
            f"first write: 10 sessions, {COMPLETIONS} completions ({tokens:,} tokens, "
            f"{size / 1e6:.1f} MB)",
            f"{statistics.median(first) * 1000:.0f}",
        ],
        ["next write, one session changed", f"{statistics.median(one_new) * 1000:.0f}"],
        ["write skipped (nothing new)", f"{statistics.median(unchanged) * 1000:.1f}"],
    ]


async def main() -> None:
    torch.set_num_threads(1)
    tokenizer = tiny_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        latency = await request_latency(tokenizer, Path(tmp))
        files = await session_file_times(tokenizer, Path(tmp))
    print(f"chat completion over TCP, median of {ROUNDS} interleaved requests\n")
    print(table(["proxy app", "median ms", "vs plain ms"], latency))
    print("\nSessionFile (median of 5)\n")
    print(table(["operation", "ms"], files))
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
