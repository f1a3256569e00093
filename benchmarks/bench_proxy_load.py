# SPDX-License-Identifier: Apache-2.0
"""The agent proxy under load: N concurrent agents x M chat turns over each transport.

Each agent is a real ``openai.AsyncOpenAI`` client in its own proxy session (the kwargs an
agent workflow gets) that holds a growing conversation for M turns. Rows, side by side in one
process and one event loop:

* ``inline``: the ASGI app called in-process (no socket);
* ``socket``: uvicorn on a loopback TCP socket, the agents on the loop's shared HTTP client;
* ``socket-subproc``: the same socket server, the agents in one other process (as CLI agents
  and ``mode="subproc"`` workers are), so the client's CPU is not the server's;
* ``direct``: the same prompts sent straight to ``engine.agenerate`` (no proxy, no HTTP), the
  floor the proxy's share of a turn is measured against.

On the scripted engine (a fixed reply, no model) the rows isolate the proxy; on the embedded
model they show what an agent sees on a laptop. Also: the median of 40 sequential keep-alive
turns and ``/rl/start_session`` calls over each transport (the Nagle / delayed-ACK check).
Memory is the process's resident set after each row (and its growth during it); ``open``
is the sessions still held when the row ends (0: every session was freed).

Run: ``python benchmarks/bench_proxy_load.py [--agents 64,512] [--turns 2] [--engines
scripted,embedded]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from typing import Any

import torch
from _util import table
from openai import AsyncOpenAI

from areal_runtime.api import ModelRequest
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy

QUESTION = "What is 17 + 25? Answer with a number."
MAX_TOKENS = 8


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def proxy_agent(proxy: AgentProxy, turns: int, latencies: list[float]) -> None:
    async with proxy.session() as session:
        client = AsyncOpenAI(**session.extra_kwargs, max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        for _ in range(turns):
            start = time.perf_counter()
            reply = await client.chat.completions.create(
                model="m", messages=messages, max_tokens=MAX_TOKENS, temperature=0
            )
            latencies.append(time.perf_counter() - start)
            messages += [
                {"role": "assistant", "content": reply.choices[0].message.content or ""},
                {"role": "user", "content": "Are you sure?"},
            ]
        session.set_rewards(1.0)
        session.export()


async def direct_agent(engine: Any, tok: Any, turns: int, latencies: list[float]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for _ in range(turns):
        start = time.perf_counter()
        prompt = tok.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        gconfig = GenerationHyperparameters(max_new_tokens=MAX_TOKENS, greedy=True)
        resp = await engine.agenerate(ModelRequest(input_ids=list(prompt), gconfig=gconfig))
        text = tok.decode(resp.output_tokens, skip_special_tokens=True)
        latencies.append(time.perf_counter() - start)
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": "Are you sure?"},
        ]


async def remote_agent(
    base_url: str, http: Any, key: str, turns: int, latencies: list[float]
) -> None:
    """An agent in another process: the same turns, over its own process's shared client."""
    client = AsyncOpenAI(base_url=base_url, api_key=key, http_client=http, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for _ in range(turns):
        start = time.perf_counter()
        reply = await client.chat.completions.create(
            model="m", messages=messages, max_tokens=MAX_TOKENS, temperature=0
        )
        latencies.append(time.perf_counter() - start)
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content or ""},
            {"role": "user", "content": "Are you sure?"},
        ]


async def child(job: dict[str, Any]) -> None:
    """``--child``: run the job's agents against a proxy in the parent process."""
    from areal_runtime import workflow_context

    http = await workflow_context.get_sdk_http_client()
    latencies: list[float] = []
    start = time.perf_counter()
    results = await asyncio.gather(
        *(remote_agent(job["base_url"], http, k, job["turns"], latencies) for k in job["keys"]),
        return_exceptions=True,
    )
    wall = time.perf_counter() - start
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    print(json.dumps({"wall": wall, "latencies": latencies, "errors": errors}))


async def subprocess_agents(proxy: AgentProxy, agents: int, turns: int) -> dict[str, Any]:
    """Agents in one other process (as CLI agents and ``mode="subproc"`` workers are)."""
    sessions = [proxy.state.start_session() for _ in range(agents)]
    job = {"base_url": proxy.base_url, "keys": [s.api_key for s in sessions], "turns": turns}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--child",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate(json.dumps(job).encode())
    for session in sessions:
        session.completions.set_last_reward(1.0)
        session.completions.export_interactions("individual")
        proxy.state.remove_session(session)
    return json.loads(out.decode().strip().splitlines()[-1])


async def load_row(engine: Any, tok: Any, transport: str, agents: int, turns: int) -> list:
    latencies: list[float] = []
    gc.collect()
    before = rss_mb()
    open_after = 0
    if transport == "direct":
        start = time.perf_counter()
        results = await asyncio.gather(
            *(direct_agent(engine, tok, turns, latencies) for _ in range(agents)),
            return_exceptions=True,
        )
        wall = time.perf_counter() - start
    elif transport == "socket-subproc":
        async with AgentProxy(engine, tok, transport="socket") as proxy:
            report = await subprocess_agents(proxy, agents, turns)
            open_after = len(proxy.state.sessions)
        wall, latencies = report["wall"], report["latencies"]
        results = [RuntimeError(e) for e in report["errors"]]
    else:
        async with AgentProxy(engine, tok, transport=transport) as proxy:
            start = time.perf_counter()  # the server is up: time the agents only
            results = await asyncio.gather(
                *(proxy_agent(proxy, turns, latencies) for _ in range(agents)),
                return_exceptions=True,
            )
            wall = time.perf_counter() - start
            open_after = len(proxy.state.sessions)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        print(f"  {transport} x{agents}: {len(errors)} errors, first: {errors[0]!r}")
    gc.collect()
    after = rss_mb()
    return [
        transport,
        agents,
        turns,
        f"{len(latencies) / wall:.0f}",
        f"{statistics.median(latencies) * 1000:.1f}" if latencies else "-",
        f"{percentile(latencies, 0.99) * 1000:.1f}" if latencies else "-",
        len(errors),
        f"{after:.0f} (+{after - before:.0f})",
        open_after,
    ]


async def sequential_rows(engine: Any, tok: Any, n: int = 40) -> dict[str, list[float]]:
    """Median keep-alive turn and /rl/start_session of one agent per transport, one request
    at a time, the transports alternating request by request (so load bursts hit both)."""
    samples: dict[str, dict[str, list[float]]] = {}
    async with (
        AgentProxy(engine, tok, transport="inline") as inline,
        AgentProxy(engine, tok, transport="socket") as socket,
        inline.session() as inline_session,
        socket.session() as socket_session,
    ):
        proxies = {"inline": (inline, inline_session), "socket": (socket, socket_session)}
        clients = {
            name: AsyncOpenAI(**session.extra_kwargs, max_retries=0)
            for name, (_, session) in proxies.items()
        }
        for i in range(n + 1):
            for name, (proxy, _) in proxies.items():
                admin = {"authorization": f"Bearer {proxy.admin_api_key}"}
                t = time.perf_counter()
                r = await proxy.http_client.post(
                    f"{proxy.base_url}/rl/start_session", json={}, headers=admin
                )
                start = time.perf_counter() - t
                r.raise_for_status()
                t = time.perf_counter()
                await clients[name].chat.completions.create(
                    model="m",
                    messages=[{"role": "user", "content": QUESTION}],
                    max_tokens=MAX_TOKENS,
                    temperature=0,
                )
                turn = time.perf_counter() - t
                if i:  # the first request of each opens the connection
                    samples.setdefault(name, {"turn": [], "start": []})
                    samples[name]["turn"].append(turn)
                    samples[name]["start"].append(start)
    return {
        name: [statistics.median(v["turn"]) * 1000, statistics.median(v["start"]) * 1000]
        for name, v in samples.items()
    }


def engines(names: list[str]) -> dict[str, tuple[Any, Any]]:
    out = {}
    if "scripted" in names:
        from areal_runtime.models.tokenizers import tiny_tokenizer

        tok = tiny_tokenizer()
        out["scripted"] = (ScriptedEngine(["42"], tokenizer=tok, cycle=True), tok)
    if "embedded" in names:
        from areal_runtime.engine.local import LocalEngine

        engine = LocalEngine.default(max_batch=64)
        out["embedded"] = (engine, engine.tokenizer)
    return out


async def main(args: argparse.Namespace) -> None:
    agent_counts = [int(n) for n in args.agents.split(",")]
    transports = args.transports.split(",")
    for name, (engine, tok) in engines(args.engines.split(",")).items():
        print(f"\n### {name} engine: sequential keep-alive (median of 40, ms)\n")
        rows = []
        seq = await sequential_rows(engine, tok)
        for t, (turn, start) in seq.items():
            rows.append([t, f"{turn:.2f}", f"{start:.2f}"])
        rows.append(
            [
                "socket - inline",
                f"{seq['socket'][0] - seq['inline'][0]:+.2f}",
                f"{seq['socket'][1] - seq['inline'][1]:+.2f}",
            ]
        )
        print(table(["transport", "chat turn", "/rl/start_session"], rows))
        print(f"\n### {name} engine: {args.turns} turns per agent\n")
        rows = []
        by_key = {}
        for agents in agent_counts:
            for transport in transports:
                row = await load_row(engine, tok, transport, agents, args.turns)
                by_key[(transport, agents)] = row
                rows.append(row)
        print(
            table(
                [
                    "transport",
                    "agents",
                    "turns",
                    "turns/s",
                    "p50 ms",
                    "p99 ms",
                    "errors",
                    "RSS MB",
                    "open",
                ],
                rows,
            )
        )
        ratios = []
        for agents in agent_counts:
            get = {t: by_key.get((t, agents)) for t in transports}
            for socket_row in [t for t in transports if t.startswith("socket")]:
                if not (get.get("inline") and get[socket_row]):
                    continue
                ratio = float(get[socket_row][3]) / float(get["inline"][3])
                share = "-"
                if get.get("direct"):
                    direct_p50 = float(get["direct"][4])
                    inline_p50, socket_p50 = float(get["inline"][4]), float(get[socket_row][4])
                    share = f"{1 - direct_p50 / inline_p50:.0%} / {1 - direct_p50 / socket_p50:.0%}"
                ratios.append([agents, socket_row, f"{ratio:.0%}", share])
        print()
        print(
            table(
                ["agents", "row", "throughput vs inline", "proxy share of p50 (inline / row)"],
                ratios,
            )
        )
        if hasattr(engine, "close"):
            engine.close()


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1:] == ["--child"]:
        asyncio.run(child(json.loads(sys.stdin.read())))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="64,512")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--engines", default="scripted,embedded")
    parser.add_argument("--transports", default="inline,socket,socket-subproc,direct")
    asyncio.run(main(parser.parse_args()))
