# SPDX-License-Identifier: Apache-2.0
"""The local engine's prefix cache and chunked prefill, on and off in one run.

On the embedded default model (``LocalEngine.default``), through the agent proxy's socket:

* **Claude Code twice**: the captured Claude Code CLI request (tests/.../claude_code_cli/
  000.json, about 35.6k tokens) sent twice, each in its own session; time to first token
  (the prefill) and the whole turn, cache on and off.
* **5-turn agent**: the captured Claude Agent SDK math request, then four more turns, each
  re-sending the history with the model's answer and a new user message (as every multi-turn
  agent does); prompt tokens sent, prompt tokens computed, wall time.
* **decode delay**: four rows decoding while the Claude Code prompt is admitted; the longest and
  the median gap between two decode steps of those rows, chunked prefill (512) and whole.

Answers are capped at 32 tokens so the figures are about prompts. Run:
``PYTHONPATH=benchmarks python benchmarks/bench_prefix_cache.py [--threads 1] [--only ...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import time
from pathlib import Path

import httpx
from _util import table

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import parse_messages_request

CAPTURED = Path(__file__).parents[1] / "tests/areal_runtime/experimental/openai/client_requests"
OFF = {"prefix_cache_bytes": 0}


def load(name: str) -> dict:
    record = json.loads((CAPTURED / name).read_text())
    record["body"] = {**record["body"], "stream": False, "max_tokens": 32}
    return record


async def post(proxy: AgentProxy, session, record: dict) -> tuple[float, dict]:
    headers = {"x-api-key": session.extra_kwargs["api_key"]}
    async with httpx.AsyncClient(timeout=1200) as client:  # noqa: ARL302
        start = time.perf_counter()
        answer = await client.post(
            proxy.base_url + record["path"], json=record["body"], headers=headers
        )
        elapsed = time.perf_counter() - start
    answer.raise_for_status()
    return elapsed, answer.json()


async def claude_twice(threads: int, engine_kwargs: dict) -> list[object]:
    """Seconds to first token and per turn, first send and second send."""
    engine = LocalEngine.default(num_threads=threads, **engine_kwargs)
    record = load("claude_code_cli/000.json")
    out: list[float] = []
    async with AgentProxy(engine, engine.tokenizer) as proxy:
        for _ in range(2):
            async with proxy.session() as s:
                turn, _ = await post(proxy, s, record)
                s.set_rewards(0.0)
                ttft = next(iter(s.export().values())).model_response.ttft
            out += [ttft, turn]
    engine.close()
    stats = engine.prefix_cache_stats()
    return [*(f"{x:.1f}" for x in out), f"{out[2] / out[0]:.1%}", f"{stats.hit_rate:.0%}"]


async def five_turns(threads: int, engine_kwargs: dict) -> list[object]:
    """Tokens sent, tokens computed and seconds for a 5-turn conversation of one agent."""
    engine = LocalEngine.default(num_threads=threads, **engine_kwargs)
    record = load("claude_agent_sdk/000.json")
    start = time.perf_counter()
    async with AgentProxy(engine, engine.tokenizer) as proxy, proxy.session() as s:
        for turn in range(5):
            _, answer = await post(proxy, s, record)
            body = copy.deepcopy(record["body"])
            text = "".join(b.get("text", "") for b in answer["content"]) or "(no answer)"
            body["messages"] += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"Check that again, step {turn + 2}."},
            ]
            record = {**record, "body": body}
        s.set_rewards(0.0)
    wall = time.perf_counter() - start
    engine.close()
    st = engine.prefix_cache_stats()
    computed = st.prompt_tokens - st.hit_tokens
    return [st.prompt_tokens, computed, f"{st.hit_rate:.0%}", f"{wall:.1f}"]


def claude_prompt(tok) -> list[int]:
    body = load("claude_code_cli/000.json")["body"]
    req = parse_messages_request(body, tok)
    return tok.apply_chat_template(
        req.messages, tools=req.tools, add_generation_prompt=True, tokenize=True, return_dict=False
    )


async def decode_delay(threads: int, chunk: int | None) -> list[object]:
    """Gaps between the decode steps four running rows see while a 35.6k prompt is admitted."""
    engine = LocalEngine.default(num_threads=threads, prefill_chunk_tokens=chunk, **OFF)
    prompt = claude_prompt(engine.tokenizer)
    steps: list[float] = []
    inner = engine._runner.decode_step

    def timed(state, version):
        inner(state, version)
        steps.append(time.perf_counter())

    engine._runner.decode_step = timed
    g = GenerationHyperparameters(max_new_tokens=4000, ignore_eos=True, greedy=True)
    short = [
        asyncio.ensure_future(
            engine.agenerate(ModelRequest(input_ids=engine.tokenizer.encode(f"{i}+1="), gconfig=g))
        )
        for i in range(4)
    ]
    while len(steps) < 5:
        await asyncio.sleep(0.01)
    admitted = time.perf_counter()
    long = await engine.agenerate(
        ModelRequest(
            input_ids=prompt,
            gconfig=GenerationHyperparameters(max_new_tokens=1, max_tokens=len(prompt) + 1),
        )
    )
    done = admitted + long.latency
    for f in short:
        f.cancel()
    await asyncio.gather(*short, return_exceptions=True)
    engine.close()
    during = [t for t in steps if admitted <= t <= done]
    gaps = [b - a for a, b in zip([admitted, *during], [*during, done], strict=True)]
    return [
        "whole" if chunk is None else f"chunks of {chunk}",
        len(prompt),
        f"{long.ttft:.1f}",
        len(during),
        f"{max(gaps):.2f}",
        f"{statistics.median(gaps):.2f}",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="runs of the 5-turn agent")
    parser.add_argument("--only", nargs="*", default=["claude", "turns", "delay"])
    args = parser.parse_args()
    print(f"embedded default model, num_threads={args.threads}, load {os.getloadavg()[0]:.1f}")
    if "claude" in args.only:
        rows = [
            ["on", *await claude_twice(args.threads, {})],
            ["off", *await claude_twice(args.threads, OFF)],
        ]
        headers = ["cache", "1st: first token s", "1st: turn s", "2nd: first token s"]
        headers += ["2nd: turn s", "2nd / 1st (first token)", "hit rate"]
        print(table(headers, rows))
    if "turns" in args.only:
        rows = []
        for _ in range(args.repeats):  # alternating, so both see the same load
            rows += [
                ["on", *await five_turns(args.threads, {})],
                ["off", *await five_turns(args.threads, OFF)],
            ]
        print(table(["cache", "prompt tokens sent", "computed", "hit rate", "wall s"], rows))
    if "delay" in args.only:
        rows = [await decode_delay(args.threads, 512), await decode_delay(args.threads, None)]
        headers = ["prefill", "prompt tokens", "its first token s", "decode steps meanwhile"]
        print(table([*headers, "longest gap s", "median gap s"], rows))
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
