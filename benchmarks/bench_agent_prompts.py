# SPDX-License-Identifier: Apache-2.0
"""Real agent prompts on the embedded default model, through the proxy: do they fit, how long.

Replays requests captured from the real clients (tests/.../client_requests) over the proxy's
socket to ``LocalEngine.default(num_threads=THREADS)``: Claude Code's first request (``claude
-p``, 54 KB, its own 12 tools), the same request with 21 tools (81 KB, the largest the issue
saw), the Claude Agent SDK math agent's (six MCP tools) and the Agents SDK's default request.
For each: size, tools, prompt tokens with the embedded tokenizer (and with Qwen3's, for
comparison), the time to first token and the whole turn (median of ``--repeats``), and with
``--cli`` one real ``claude -p`` turn end to end. Run:
``python benchmarks/bench_agent_prompts.py [--threads 2] [--repeats 3] [--cli]``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _util import table

from areal_runtime.engine.local import LocalEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import parse_messages_request
from areal_runtime.experimental.openai.proxy.apis.responses import parse_responses_request
from areal_runtime.models.tokenizers import qwen3_tokenizer

CAPTURED = Path(__file__).parents[1] / "tests/areal_runtime/experimental/openai/client_requests"


def with_tools(record: dict, n: int) -> dict:
    """Claude Code's request with its tool list repeated (renamed) up to ``n`` tools."""
    record = copy.deepcopy(record)
    tools = record["body"]["tools"]
    extra = [
        {**copy.deepcopy(tools[i % len(tools)]), "name": f"{tools[i % len(tools)]['name']}_{i}"}
        for i in range(n - len(tools))
    ]
    record["body"]["tools"] = tools + extra
    return record


def cases() -> list[tuple[str, dict]]:
    load = lambda name: json.loads((CAPTURED / name).read_text())  # noqa: E731
    claude = load("claude_code_cli/000.json")
    return [
        ("Claude Code CLI, first request", claude),
        ("Claude Code CLI, 21 tools", with_tools(claude, 21)),
        ("Claude Agent SDK math agent", load("claude_agent_sdk/000.json")),
        ("Agents SDK default", load("openai_agents/000.json")),
    ]


def prompt_tokens(record: dict, tok) -> int:
    body = record["body"]
    if record["path"] == "/v1/messages":
        req = parse_messages_request(body, tok)
    else:
        req = parse_responses_request(body, tok).chat
    return len(
        tok.apply_chat_template(
            req.messages, tools=req.tools, add_generation_prompt=True, tokenize=True,
            return_dict=False,
        )
    )  # fmt: skip


async def turn(proxy: AgentProxy, record: dict) -> tuple[float, float, dict]:
    """Seconds to the first streamed byte of the answer and to its end, and the usage."""
    async with proxy.session() as s, httpx.AsyncClient(timeout=600) as client:  # noqa: ARL302
        headers = {
            "x-api-key": s.extra_kwargs["api_key"],
            "authorization": "Bearer " + s.extra_kwargs["api_key"],
        }
        body = {**record["body"], "stream": False}
        start = time.perf_counter()
        answer = await client.post(proxy.base_url + record["path"], json=body, headers=headers)
        total = time.perf_counter() - start
        answer.raise_for_status()
        s.set_rewards(0.0)
        ttft = next(iter(s.export().values())).model_response.ttft
        return ttft, total, answer.json()["usage"]


async def cli_turn(proxy: AgentProxy, cli: Path) -> float:
    async with proxy.session() as s:
        with tempfile.TemporaryDirectory() as home:
            env = {
                **os.environ, "HOME": home, "ANTHROPIC_BASE_URL": proxy.base_url,
                "ANTHROPIC_API_KEY": s.extra_kwargs["api_key"],
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }  # fmt: skip
            start = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(
                str(cli), "-p", "What is 2+3?", "--max-turns", "1", env=env, cwd=home,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            out, _ = await proc.communicate()
            elapsed = time.perf_counter() - start
        if proc.returncode:
            raise RuntimeError(out.decode()[-2000:])
        return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="also time one real `claude -p` turn")
    args = parser.parse_args()
    engine = LocalEngine.default(num_threads=args.threads)
    tok, qwen = engine.tokenizer, qwen3_tokenizer()
    rows = []
    async with AgentProxy(engine, tok) as proxy:
        for name, record in cases():
            runs = [await turn(proxy, record) for _ in range(args.repeats)]
            usage = runs[-1][2]
            rows.append([
                name, f"{len(json.dumps(record['body'])) / 1000:.0f} KB",
                len(record["body"].get("tools") or []), usage["input_tokens" if "input_tokens" in usage else "prompt_tokens"],
                prompt_tokens(record, qwen),
                f"{statistics.median(r[0] for r in runs):.1f}",
                f"{statistics.median(r[1] for r in runs):.1f}",
            ])  # fmt: skip
        if args.cli:
            import claude_agent_sdk

            cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
            elapsed = statistics.median([await cli_turn(proxy, cli) for _ in range(args.repeats)])
            rows.append(["`claude -p` end to end", "", "", "", "", "", f"{elapsed:.1f}"])
    engine.close()
    print(
        f"embedded default model, LocalEngine num_threads={args.threads}, median of {args.repeats}"
    )
    print(
        table(
            [
                "request",
                "size",
                "tools",
                "tokens (embedded)",
                "tokens (Qwen3)",
                "first token s",
                "turn s",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
