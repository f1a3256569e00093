# SPDX-License-Identifier: Apache-2.0
"""AReaL's Claude Code math agent (``areal.workflow.anthropic.claude_math_agent``).

The Claude Agent SDK starts the Claude Code CLI (bundled in the ``claude-agent-sdk`` wheel) as a
child process and points it at the proxy through ``ANTHROPIC_BASE_URL``; the six calculator
tools run in this process as an in-process MCP server. The reward is ``math_verify`` of the
answer text against ``data["answer"]``. Same constructor, tools, prompt and environment as
AReaL's, so a config that names ``areal.workflow.anthropic.claude_math_agent.MathToolAgent``
ports by renaming ``areal`` to ``areal_runtime``.
"""

from __future__ import annotations

import os
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    TextBlock,
    create_sdk_mcp_server,
    tool,
)

from areal_runtime.api import AsyncRewardWrapper
from areal_runtime.utils.calculator import CALCULATOR, CalculatorTool

SERVER_NAME = "calc"


def math_reward_fn(completions: str, answer: str) -> float:
    """1.0 when ``math_verify`` finds the gold answer in the completion text."""
    from math_verify import parse, verify

    return float(verify(parse(completions), parse(answer)))


def _text(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(value)}]}


def _error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error: {message}"}], "is_error": True}


def _mcp_tool(calc: CalculatorTool) -> Any:
    """One calculator tool as an MCP tool: float arguments, a refusal as an error result."""
    description, params = calc.spellings["claude_code"]

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        try:
            return _text(calc(*(args[p] for p in params), spelling="claude_code"))
        except ValueError as exc:
            return _error(str(exc))

    return tool(calc.name, description, dict.fromkeys(params, float))(handler)


# Built once per process, not per episode; at module level so the agent stays picklable for
# subprocess mode (the wrapper holds locks).
_REWARD = AsyncRewardWrapper(math_reward_fn)
CALCULATOR_TOOLS = [_mcp_tool(t) for t in CALCULATOR]
add, subtract, multiply, divide, power, sqrt = CALCULATOR_TOOLS
calculator_server = create_sdk_mcp_server(name=SERVER_NAME, version="1.0.0", tools=CALCULATOR_TOOLS)
# Claude Code names MCP tools mcp__<server>__<tool>.
CALCULATOR_MCP_TOOLS = [f"mcp__{SERVER_NAME}__{t.name}" for t in CALCULATOR_TOOLS]


class MathToolAgent:
    """A Claude Code agent that must use the calculator tools; its reward is math_verify's."""

    SYSTEM_PROMPT = (
        "Answer the user's math questions using the available calculator tools. "
        "Don't give the answer directly, you must use tools to do the mathematical calculation."
    )

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def _env(self, extra_kwargs: dict[str, Any]) -> dict[str, str]:
        """What the CLI child process needs to reach the proxy (empty: Anthropic's defaults)."""
        base_url = extra_kwargs.get("base_url") or os.getenv("ANTHROPIC_BASE_URL")
        api_key = extra_kwargs.get("api_key") or os.getenv("ANTHROPIC_API_KEY")
        if not base_url:
            return {}
        return {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": api_key or "",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(extra_kwargs.get("max_completion_tokens", 1024)),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
        }

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        """One episode: the last message of ``data["messages"]`` to Claude Code; the reward."""
        # The SDK reads this from the parent's environment when the client is built.
        os.environ["CLAUDE_CODE_STREAM_CLOSE_TIMEOUT"] = "300000"
        options = ClaudeAgentOptions(
            system_prompt=self.SYSTEM_PROMPT,
            tools=CALCULATOR_MCP_TOOLS,
            mcp_servers={SERVER_NAME: calculator_server},
            allowed_tools=CALCULATOR_MCP_TOOLS,
            max_turns=self.kwargs.get("max_turns", 10),
            env=self._env(extra_kwargs),
        )
        answer_text = ""
        async with ClaudeSDKClient(options=options) as client:
            await client.query(data["messages"][-1]["content"])
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    answer_text += "".join(
                        block.text for block in message.content if isinstance(block, TextBlock)
                    )
        return await _REWARD(completions=answer_text, answer=data["answer"])
