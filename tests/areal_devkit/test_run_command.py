# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit run`` as a user runs it: a subprocess on the embedded default model."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "areal_devkit"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(*args, cwd=ROOT):
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=300
    )


def test_run_example_on_the_default_model(tmp_path):
    out = tmp_path / "traj.pt"
    proc = run(
        "run",
        "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow",
        "--limit",
        "4",
        "--output",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "episodes 4  accepted 4  rejected 0" in proc.stdout
    assert "reward mean" in proc.stdout and "loop stalls 0" in proc.stdout
    batch = torch.load(out)
    assert batch["input_ids"].shape[0] == 4 and batch["rewards"].shape == (4,)
    assert batch["rewards"].mean() > 0  # the default model gets most of these right


def test_run_with_scripted_engine_jsonl_output_and_data(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(
        json.dumps({"messages": [{"role": "user", "content": "What is 1+1?"}], "answer": "2"})
        + "\n"
    )
    out = tmp_path / "t.jsonl"
    proc = run(
        "run", "examples/arithmetic_rlvr.py:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--output", str(out),
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text().splitlines()[0])
    assert record["accepted"] and record["reward"] == 1.0 and record["rewards"] == [1.0]


def test_bad_inputs_exit_2_with_a_message(tmp_path):
    cases = [
        (["run", "examples.nope:X"], "No module named 'examples.nope'"),
        (
            ["run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "gpu"],
            "unknown engine 'gpu'",
        ),
        (
            ["run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "sglang::"],
            "is not HOST:PORT",
        ),
        (
            [
                "run",
                "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow",
                "--engine",
                "vllm:host:99999",
            ],
            "is not HOST:PORT",
        ),
        (
            ["run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--data", "missing.jsonl"],
            "does not exist",
        ),
        (
            ["run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--kwargs", "{"],
            "--kwargs is not valid JSON",
        ),
    ]
    for args, message in cases:
        proc = run(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"messages": [], "answer": "1"}) + "\n")
    proc = run("run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--data", str(data))
    assert proc.returncode == 1  # every episode rejected: nothing to train on
    assert "rejected 1 (exception: 1)" in proc.stdout
    flow = tmp_path / "needs_reward.py"
    flow.write_text(
        "from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow\n"
        "class NeedsReward(ArithmeticRLVRWorkflow):\n"
        "    def __init__(self, gconfig, tokenizer, reward_fn):\n"
        "        super().__init__(gconfig, tokenizer, reward_fn)\n"
    )
    proc = run("run", f"{flow}:NeedsReward", "--data", str(data))
    assert proc.returncode == 2 and "needs reward_fn" in proc.stderr


def test_output_leads_with_the_summary_then_samples_then_rejections(tmp_path):
    rows = [
        {"messages": [{"role": "user", "content": f"What is {i}+1?"}], "answer": str(i + 1)}
        for i in range(20)
    ]
    rows[3] = {"messages": [], "answer": "1"}  # the chat template fails: rejected with a traceback
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--show", "2",
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "episodes 20  accepted 19  rejected 1 (exception: 1)"
    assert "-- 2 of 19 accepted episodes --" in lines
    samples = lines.index("-- 2 of 19 accepted episodes --")
    assert re.fullmatch(r"episode \d+  reward [01]\.000  3 tokens trained", lines[samples + 1])
    assert lines[samples + 2].startswith("  context    | <|im_start|>user\\nWhat is")
    assert lines[samples + 3].startswith("  completion | ") and lines[samples + 3].endswith(
        "<|im_end|>"
    )
    rejected = lines.index("-- 1 rejected episodes --")
    assert lines[rejected + 1] == "episode 3  rejected (exception)"
    assert any("Error" in line for line in lines[rejected + 2 : rejected + 8])
    assert not any(line.split()[:1] == ["episode"] and "latency" in line for line in lines)
    assert "latency ms" not in proc.stdout  # 20 episodes: no table unless asked
    table = run(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--table", "--show", "0",
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    )  # fmt: skip
    assert "latency ms" in table.stdout and "accepted episodes --" not in table.stdout
    assert (
        len([line for line in table.stdout.splitlines() if line.strip().startswith(("0 ", "19 "))])
        == 2
    )


TOOL_WORKFLOW = """
from dataclasses import dataclass, field

from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow


@dataclass
class ToolSettings:  # like AReaL's TIRConfig
    max_turns: int = field(default=2)
    tool_timeout: float = field(default=30)


class ToolWorkflow(ArithmeticRLVRWorkflow):
    def __init__(self, gconfig, tokenizer, tir_config: ToolSettings):
        super().__init__(gconfig, tokenizer)
        assert isinstance(tir_config, ToolSettings), type(tir_config)
        assert isinstance(tir_config.tool_timeout, float), tir_config
        print("settings", tir_config.max_turns, tir_config.tool_timeout, flush=True)
"""


def test_kwargs_build_a_dataclass_argument_as_a_yaml_section_would(tmp_path):
    """TIR's ``tir_config: TIRConfig`` from --kwargs JSON: an object, not a dict (which raised
    ``'dict' object has no attribute 'tool_timeout'``), with a JSON 30 for a float as 30.0."""
    (tmp_path / "tool_flow.py").write_text(TOOL_WORKFLOW)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    common = ("run", "tool_flow:ToolWorkflow", "--engine", "scripted", "--limit", "1")
    proc = run(
        *common, "--kwargs", '{"tir_config": {"tool_timeout": 5, "max_turns": 3}}', cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "settings 3 5.0" in proc.stdout
    proc = run(*common, "--kwargs", '{"tir_config": {"tool_timout": 5}}', cwd=tmp_path)
    assert proc.returncode == 2
    assert "--kwargs tir_config (ToolSettings): unknown config key 'tool_timout'" in proc.stderr
    assert "did you mean 'tool_timeout'" in proc.stderr and "Traceback" not in proc.stderr
