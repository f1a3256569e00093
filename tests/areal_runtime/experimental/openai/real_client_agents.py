# SPDX-License-Identifier: Apache-2.0
"""Agents that drive real clients with their default settings, for ``areal-devkit run`` tests.

``ClaudeCodeCliAgent`` starts the Claude Code CLI bundled in ``claude-agent-sdk`` as a child
process (``claude -p``), pointed at the proxy by ``ANTHROPIC_BASE_URL`` only: it reaches the
proxy because the proxy serves HTTP in every mode. ``DefaultAgentsSdkAgent`` is an OpenAI Agents
SDK ``Agent`` with one function tool and no model settings (it sends ``reasoning`` and ``text``
by default).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any


def claude_cli() -> Path:
    """The CLI inside the claude-agent-sdk wheel."""
    import claude_agent_sdk

    return Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


class ClaudeCodeCliAgent:
    """``claude -p QUESTION --max-turns 1`` against the proxy; reward 1 if the answer is in it."""

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        with tempfile.TemporaryDirectory() as home:  # the CLI writes its state under HOME
            env = {
                **os.environ,
                "HOME": home,
                "ANTHROPIC_BASE_URL": extra_kwargs["base_url"],
                "ANTHROPIC_API_KEY": extra_kwargs["api_key"],
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            question = data["messages"][-1]["content"]
            proc = await asyncio.create_subprocess_exec(
                str(claude_cli()), "-p", question, "--max-turns", "1",
                env=env, cwd=home, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), timeout=240)
        text = (out + err).decode()
        if proc.returncode != 0 and "output token maximum" in text:
            # The answer hit the model's length cap (the embedded model rambles on Claude Code's
            # 26k-token prompt) and the CLI exits 1: a wrong answer, not a broken episode.
            return 0.0
        if proc.returncode != 0:
            raise RuntimeError(f"claude exited {proc.returncode}: {text[-2000:]}")
        return float(data["answer"] in out.decode())


class DefaultAgentsSdkAgent:
    """An Agents SDK agent with a function tool and default model settings."""

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        from agents import Agent, OpenAIProvider, RunConfig, Runner, function_tool
        from openai import AsyncOpenAI

        @function_tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        client = AsyncOpenAI(
            base_url=extra_kwargs["base_url"],
            api_key=extra_kwargs["api_key"],
            http_client=extra_kwargs["http_client"],
            max_retries=0,
        )
        agent = Agent(name="calculator", instructions="Answer with the sum.", tools=[add])
        config = RunConfig(
            model_provider=OpenAIProvider(openai_client=client), tracing_disabled=True
        )
        result = await Runner.run(
            agent, data["messages"][-1]["content"], run_config=config, max_turns=2
        )
        return float(data["answer"] in str(result.final_output))
