# SPDX-License-Identifier: Apache-2.0
"""Executor overhead, stall-detector overhead and proxy overhead, measured side by side.

* 10,000 episodes of a trivial workflow on a zero-latency ScriptedEngine, detector on and off;
* one call through the proxy per API (chat completions plain and streamed, Responses with the
  real AsyncOpenAI client, Messages with the real AsyncAnthropic client; in-process transport)
  against one direct ``agenerate`` on the same engine.
Run: ``python benchmarks/bench_executor.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import time

import torch
from _util import table
from openai import AsyncOpenAI

from areal_runtime.api import ModelRequest, RolloutWorkflow
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.infra.workflow_executor import run_rollout
from areal_runtime.models.tokenizers import tiny_tokenizer

N_EPISODES = 10_000


class Trivial(RolloutWorkflow):
    async def arun_episode(self, engine, data):
        resp = await engine.agenerate(ModelRequest(input_ids=[1, 2, 3]))
        n = 3 + resp.output_len
        return {"input_ids": torch.ones(1, n, dtype=torch.int32), "rewards": torch.ones(1)}


async def executor_seconds(stall: float | None) -> float:
    engine = ScriptedEngine([[5, 6]], cycle=True)
    start = time.perf_counter()
    result = await run_rollout(
        Trivial(), ({} for _ in range(N_EPISODES)), engine, stall_threshold_s=stall, progress=False
    )
    assert result.report.accepted == N_EPISODES
    return time.perf_counter() - start


async def proxy_overheads(n: int = 300) -> tuple[float, dict[str, float]]:
    """Median seconds of a direct agenerate, and of one call per API through the proxy."""
    import anthropic

    tok = tiny_tokenizer()
    engine = ScriptedEngine(["ok"], tokenizer=tok, cycle=True)
    messages = [{"role": "user", "content": "What is 2+2?"}]
    prompt = tok.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    direct = []
    for _ in range(n):
        start = time.perf_counter()
        await engine.agenerate(ModelRequest(input_ids=prompt, tokenizer=tok))
        direct.append(time.perf_counter() - start)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as session:
        kw = session.extra_kwargs
        openai_client = AsyncOpenAI(
            base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"]
        )
        anthropic_client = anthropic.AsyncAnthropic(
            base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"]
        )

        async def chat() -> None:
            await openai_client.chat.completions.create(model="m", messages=messages)

        async def chat_streamed() -> None:
            stream = await openai_client.chat.completions.create(
                model="m", messages=messages, stream=True
            )
            async for _ in stream:
                pass

        async def responses() -> None:
            await openai_client.responses.create(model="m", input=messages[0]["content"])

        async def messages_api() -> None:
            await anthropic_client.messages.create(model="m", max_tokens=16, messages=messages)

        calls = {
            "chat completion": chat,
            "chat completion, streamed": chat_streamed,
            "Responses API": responses,
            "Messages API (Anthropic SDK)": messages_api,
        }
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(n):  # interleaved, so load changes hit every API alike
            for name, call in calls.items():
                start = time.perf_counter()
                await call()
                times[name].append(time.perf_counter() - start)
    return statistics.median(direct), {k: statistics.median(v[10:]) for k, v in times.items()}


def main() -> None:
    torch.set_num_threads(1)
    runs_off, runs_on = [], []
    for _ in range(3):  # interleaved, so load changes hit both
        runs_off.append(asyncio.run(executor_seconds(None)))
        runs_on.append(asyncio.run(executor_seconds(0.05)))
    off, on = statistics.median(runs_off), statistics.median(runs_on)
    direct, proxied = asyncio.run(proxy_overheads())
    rows = [
        [f"{N_EPISODES} trivial episodes, stall detector off", f"{off:.2f} s", "< 2 s"],
        [f"{N_EPISODES} trivial episodes, stall detector on", f"{on:.2f} s", ""],
        ["stall detector overhead", f"{(on / off - 1) * 100:+.1f} %", "< 5 %"],
        ["direct agenerate (median)", f"{direct * 1000:.2f} ms", ""],
    ]
    for name, seconds in proxied.items():
        rows.append([f"{name} through the proxy (median)", f"{seconds * 1000:.2f} ms", ""])
        rows.append([f"proxy overhead, {name}", f"{(seconds - direct) * 1000:.2f} ms", "< 5 ms"])
    print(table(["measure", "value", "goal"], rows))


if __name__ == "__main__":
    main()
