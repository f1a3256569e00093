# SPDX-License-Identifier: Apache-2.0
"""A scaffolded tool agent learns on the embedded model: RL makes its tool use better.

The direction only, on a fixed seed and a small budget (the timing is in BENCHMARKS.md).
"""

import json
import shutil
from pathlib import Path

import pytest

from areal_devkit.cli import main

pytestmark = pytest.mark.slow
SEED_PROJECT = Path(__file__).parents[2] / "examples" / "seed_projects" / "lazy_project"


def test_anthropic_tool_agent_reward_rises(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "project"
    shutil.copytree(SEED_PROJECT, repo)
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))
    assert (
        main(["new", "calc", "--variant", "agent_anthropic", "--package", "myproj.workflow"]) == 0
    )
    metrics = tmp_path / "metrics.jsonl"
    argv = ["train", "myproj.workflow.calc:CalcAgent", "--steps", "16", "--batch-size", "4"]
    argv += ["--lr", "1e-3", "--seed", "1", "--metrics-out", str(metrics), "--quiet"]
    assert main(argv) == 0
    # A tool agent starts from the weights as they ship, not the under-confident ones.
    assert "from the embedded default model" in capsys.readouterr().err
    rewards = [json.loads(line)["reward_mean"] for line in metrics.read_text().splitlines()]
    first, last = sum(rewards[:4]) / 4, sum(rewards[-4:]) / 4
    assert 0.05 < first < 0.7, rewards  # the skill is there, and only in part
    assert last > first + 0.1, rewards
