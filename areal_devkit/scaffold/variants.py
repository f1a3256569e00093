# SPDX-License-Identifier: Apache-2.0
"""The template's variants and the files a scaffold writes: the one list the CLI, the hooks,
the docs and the tests read. ``cookiecutter.json`` repeats the names for cookiecutter's own
prompt; a test keeps the two equal.
"""

from __future__ import annotations

from pathlib import PurePosixPath

VARIANTS: dict[str, str] = {
    "rlvr": "single turn with a verifiable reward",
    "multi_turn": "retry with feedback, discounted reward",
    "agent_openai": "an agent using the OpenAI SDK through the proxy",
    "vision": "single turn with image inputs",
    "agent_openai_agents": "an OpenAI Agents SDK agent with a function tool (Runner.run)",
    "agent_anthropic": "an agent on Anthropic's Messages API with a tool",
    "agent_claude": "a Claude Code agent (Claude Agent SDK) with an in-process MCP tool",
}


def generated_paths(package: str, workflow_name: str) -> tuple[PurePosixPath, PurePosixPath]:
    """``(module, test)`` relative to the repository root, as the template writes them."""
    module = PurePosixPath(*package.split(".")) / f"{workflow_name}.py"
    return module, PurePosixPath("tests") / f"test_{workflow_name}_workflow.py"
