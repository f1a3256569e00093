# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit run`` as a user runs it: a subprocess on the embedded default model."""

import json
import os
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
