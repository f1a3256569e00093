# SPDX-License-Identifier: Apache-2.0
"""Real clients complete episodes through ``areal-devkit run`` on the embedded default model.

Each test is what a user types: the Agents SDK with default settings, the Claude Code CLI as a
child process of an inline agent (its ~36k-token first request included), and the mirror of
AReaL's Claude Code math agent (Claude Agent SDK + in-process MCP calculator).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).parent
ROOT = HERE.parents[3]
AGENTS = HERE / "real_client_agents.py"


def run(workflow: str, tmp_path: Path, *args: str) -> tuple[str, dict]:
    out = tmp_path / "traj.pt"
    cmd = [sys.executable, "-m", "areal_devkit", "run", workflow, "--output", str(out), *args]
    env = {**os.environ, "HOME": str(tmp_path)}  # the CLI keeps its state in HOME
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=540, env=env
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc.stdout, torch.load(out)


@pytest.mark.slow
def test_the_agents_sdk_with_default_settings(tmp_path):
    stdout, batch = run(f"{AGENTS}:DefaultAgentsSdkAgent", tmp_path, "--limit", "2")
    assert "episodes 2  accepted 2  rejected 0" in stdout
    assert batch["loss_mask"].sum().item() >= 2  # something was sampled and trained


@pytest.mark.slow
def test_the_claude_code_cli_as_a_child_process_of_an_inline_agent(tmp_path):
    stdout, batch = run(f"{AGENTS}:ClaudeCodeCliAgent", tmp_path, "--limit", "1")
    assert "episodes 1  accepted 1  rejected 0" in stdout
    # Claude Code's own system prompt and tools: tens of thousands of tokens, all answered.
    assert batch["attention_mask"].sum(-1).max().item() > 20_000


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["inline", "subproc"])
def test_areals_claude_code_math_agent(tmp_path, mode):
    workflow = "areal_runtime.workflow.anthropic.claude_math_agent:MathToolAgent"
    args = ["--limit", "2", "--kwargs", '{"max_turns": 2}', "--agent-mode", mode]
    stdout, batch = run(workflow, tmp_path, *args)
    assert "episodes 2  accepted 2  rejected 0" in stdout
    assert batch["loss_mask"].sum().item() >= 2


@pytest.mark.slow
def test_an_agent_whose_child_never_reaches_the_proxy_is_rejected_with_the_reason(tmp_path):
    agent = tmp_path / "lost_agent.py"
    agent.write_text(
        "class LostAgent:\n    async def run(self, data, **extra_kwargs):\n        return 1.0\n"
    )
    cmd = [sys.executable, "-m", "areal_devkit", "run", f"{agent}:LostAgent", "--limit", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "LostAgent.run returned 1.0 without calling the model" in proc.stdout
    assert "base_url=http://127.0.0.1:" in proc.stdout


def test_the_claude_code_math_agent_pickles_for_subprocess_mode():
    import pickle

    from areal_runtime.workflow.anthropic.claude_math_agent import MathToolAgent

    assert pickle.loads(pickle.dumps(MathToolAgent(max_turns=2))).kwargs == {"max_turns": 2}
