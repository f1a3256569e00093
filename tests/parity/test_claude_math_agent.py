# SPDX-License-Identifier: Apache-2.0
"""AReaL's Claude Code math agent and its mirror behave the same, without starting the CLI.

The tools are called as Claude Code would call them; ``ClaudeSDKClient`` is replaced in each
module by a fake that records the options the agent built and answers with one text block, so
the options (prompt, tools, environment for the CLI) and the reward are compared directly.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from claude_agent_sdk import AssistantMessage, TextBlock

from .conftest import PACKAGES, mod

NAME = "workflow.anthropic.claude_math_agent"
CALLS = [
    ("add", {"a": 2, "b": 3}),
    ("subtract", {"a": 2, "b": 3.5}),
    ("multiply", {"a": -4, "b": 2.5}),
    ("divide", {"a": 7, "b": 2}),
    ("divide", {"a": 7, "b": 0}),
    ("power", {"base": 2, "exponent": 10}),
    ("sqrt", {"n": 2}),
    ("sqrt", {"n": -1}),
]


def tools_of(pkg: str) -> dict[str, Any]:
    module = mod(pkg, NAME)
    return {t.name: t for t in (getattr(module, n) for n in ("add", "subtract", "multiply", "divide", "power", "sqrt"))}  # fmt: skip


def test_same_prompt_tool_names_and_schemas():
    areal, ours = mod("areal", NAME), mod("areal_runtime", NAME)
    assert ours.MathToolAgent.SYSTEM_PROMPT == areal.MathToolAgent.SYSTEM_PROMPT
    assert ours.CALCULATOR_MCP_TOOLS == areal.CALCULATOR_MCP_TOOLS
    theirs, mine = tools_of("areal"), tools_of("areal_runtime")
    assert {n: (t.description, t.input_schema) for n, t in mine.items()} == {
        n: (t.description, t.input_schema) for n, t in theirs.items()
    }


@pytest.mark.parametrize(("name", "args"), CALLS)
def test_each_tool_answers_the_same(name, args):
    answers = [asyncio.run(tools_of(pkg)[name].handler(dict(args))) for pkg in PACKAGES]
    assert answers[0] == answers[1]


class FakeClient:
    """Records the options; answers every query with ``answer`` as one text block."""

    seen: ClassVar[list[Any]] = []
    answer = "The answer is 5"

    def __init__(self, options: Any) -> None:
        FakeClient.seen.append(options)

    async def __aenter__(self) -> FakeClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def query(self, prompt: str) -> None:
        self.prompt = prompt

    async def receive_response(self):
        yield AssistantMessage(content=[TextBlock(text=self.answer)], model="m")


@pytest.mark.parametrize("extra", [{"base_url": "http://127.0.0.1:1", "api_key": "sk-1"}, {}])
@pytest.mark.parametrize("answer", ["5", "4"])
def test_same_options_for_the_cli_and_same_reward(monkeypatch, extra, answer):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    data = {"messages": [{"role": "user", "content": "What is 2+3?"}], "answer": "5"}
    results = {}
    for pkg in PACKAGES:
        module = mod(pkg, NAME)
        monkeypatch.setattr(module, "ClaudeSDKClient", FakeClient)
        monkeypatch.setattr(FakeClient, "answer", answer)
        FakeClient.seen = []
        reward = asyncio.run(module.MathToolAgent(max_turns=3).run(data, **extra))
        (options,) = FakeClient.seen
        results[pkg] = (
            reward,
            options.system_prompt,
            options.tools,
            options.allowed_tools,
            options.max_turns,
            options.env,
            sorted(options.mcp_servers),
        )
    assert results["areal_runtime"] == results["areal"]
    assert results["areal"][0] == float(answer == "5")
