# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit run`` as a user runs it: one subprocess on the embedded default model, the
rest as ``main(args)`` in this process (the ``devkit_main`` fixture: the same exit status and
output without a fresh interpreter importing torch for each call)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "areal_devkit"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(*args, cwd=ROOT):
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=300
    )


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
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


def test_run_with_scripted_engine_jsonl_output_and_data(tmp_path, devkit_main):
    data = tmp_path / "d.jsonl"
    data.write_text(
        json.dumps({"messages": [{"role": "user", "content": "What is 1+1?"}], "answer": "2"})
        + "\n"
    )
    out = tmp_path / "t.jsonl"
    proc = devkit_main(
        "run", "examples/arithmetic_rlvr.py:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--output", str(out),
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text().splitlines()[0])
    assert record["accepted"] and record["reward"] == 1.0 and record["rewards"] == [1.0]


def test_bad_inputs_exit_2_with_a_message(tmp_path, devkit_main):
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
        proc = devkit_main(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"messages": [], "answer": "1"}) + "\n")
    proc = devkit_main(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--data",
        str(data),
    )  # fmt: skip
    assert proc.returncode == 1  # every episode rejected: nothing to train on
    assert "rejected 1 (exception: 1)" in proc.stdout
    flow = tmp_path / "needs_reward.py"
    flow.write_text(
        "from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow\n"
        "class NeedsReward(ArithmeticRLVRWorkflow):\n"
        "    def __init__(self, gconfig, tokenizer, reward_fn):\n"
        "        super().__init__(gconfig, tokenizer, reward_fn)\n"
    )
    proc = devkit_main("run", f"{flow}:NeedsReward", "--data", str(data))
    assert proc.returncode == 2 and "needs reward_fn" in proc.stderr
    assert "fn(prompt, completions, prompt_ids, completion_ids, **row)" in proc.stderr


def test_output_leads_with_the_summary_then_samples_then_rejections(tmp_path, devkit_main):
    rows = [
        {"messages": [{"role": "user", "content": f"What is {i}+1?"}], "answer": str(i + 1)}
        for i in range(20)
    ]
    rows[3] = {"messages": [], "answer": "1"}  # the chat template fails: rejected with a traceback
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = devkit_main(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--show", "2", "--allow-rejected",
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
    table = devkit_main(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--table", "--show", "0",
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    )  # fmt: skip
    assert "latency ms" in table.stdout and "accepted episodes --" not in table.stdout
    assert (
        len([line for line in table.stdout.splitlines() if line.strip().startswith(("0 ", "19 "))])
        == 2
    )


def test_summary_shows_the_prefix_cache_hit_rate(tmp_path, devkit_main):
    # A group's samples share their prompt: all but the first reuse its cached blocks.
    proc = devkit_main(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--limit", "2",
        "--group-size", "4",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    line = re.search(r"prefix cache: (\d+)% of (\d+) prompt tokens reused", proc.stdout)
    assert line, proc.stdout
    assert int(line.group(1)) > 0 and int(line.group(2)) > 0
    scripted = devkit_main(
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--limit", "2",
        "--engine", "scripted",
    )  # fmt: skip
    assert scripted.returncode == 0, scripted.stderr
    assert "prefix cache" not in scripted.stdout  # no cache, no line


def test_a_rejected_episode_fails_the_run_unless_allowed(tmp_path, devkit_main):
    """Like pytest: 19 of 20 accepted is still a failure to look at, and says so on stderr."""
    rows = [
        {"messages": [{"role": "user", "content": f"What is {i}+1?"}], "answer": str(i + 1)}
        for i in range(4)
    ]
    rows[1] = rows[3] = {"messages": [], "answer": "1"}  # the chat template fails: rejected
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = [
        "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", "scripted",
        "--data", str(data), "--show", "0",
        "--kwargs", '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}',
    ]  # fmt: skip
    strict = devkit_main(*args)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "2 of 4 episodes were rejected" in strict.stderr and "--allow-rejected" in strict.stderr
    # The same error twice is shown once, with the user's line (here the example workflow's).
    assert "episode 1  rejected (exception), and 1 more the same way: 3" in strict.stdout
    assert strict.stdout.count("ValueError: Cannot apply chat template") == 1, strict.stdout
    assert "examples/arithmetic_rlvr.py" in strict.stdout
    allowed = devkit_main(*args, "--allow-rejected")
    assert allowed.returncode == 0, allowed.stderr
    assert "rejected 2 (exception: 2)" in allowed.stdout


def test_a_rejection_names_the_users_line_when_the_traceback_tail_does_not():
    """Found: a reward called the wrong way showed only the runtime's frames."""
    from areal_devkit.commands.run import format_rejection
    from areal_runtime.infra.rollout_report import EpisodeRecord

    runtime = ROOT / "areal_runtime/api/reward_api.py"
    error = (
        "Traceback (most recent call last):\n"
        '  File "/app/myproj/tutor.py", line 84, in arun_episode\n'
        "    reward = await self.async_reward_fn(\n"
        + "".join(f'  File "{runtime}", line {n}, in f{n}\n    x()\n' for n in range(5))
        + "areal_runtime.errors.RewardFunctionError: missing a required argument: 'answer'\n"
    )
    record = EpisodeRecord(0, 0, False, 0.1, reason="exception", error=error)
    text = format_rejection(record, also=[1, 2])
    assert text.splitlines()[0] == "episode 0  rejected (exception), and 2 more the same way: 1, 2"
    assert text.splitlines()[-1] == (
        "  raised from your code at /app/myproj/tutor.py:84 in arun_episode: "
        "reward = await self.async_reward_fn("
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


def test_kwargs_build_a_dataclass_argument_as_a_yaml_section_would(tmp_path, devkit_main):
    """TIR's ``tir_config: TIRConfig`` from --kwargs JSON: an object, not a dict (which raised
    ``'dict' object has no attribute 'tool_timeout'``), with a JSON 30 for a float as 30.0."""
    (tmp_path / "tool_flow.py").write_text(TOOL_WORKFLOW)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    common = ("run", "tool_flow:ToolWorkflow", "--engine", "scripted", "--limit", "1")
    proc = devkit_main(
        *common, "--kwargs", '{"tir_config": {"tool_timeout": 5, "max_turns": 3}}', cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "settings 3 5.0" in proc.stdout
    proc = devkit_main(*common, "--kwargs", '{"tir_config": {"tool_timout": 5}}', cwd=tmp_path)
    assert proc.returncode == 2
    assert "--kwargs tir_config (ToolSettings): unknown config key 'tool_timout'" in proc.stderr
    assert "did you mean 'tool_timeout'" in proc.stderr and "Traceback" not in proc.stderr


def test_seed_reaches_the_engine_and_another_seed_draws_other_episodes(
    tmp_path, devkit_main, monkeypatch
):
    """At temperature 1 a run is a sample: ``--seed`` draws another (0 without the flag), so a
    user can see how much a reward mean moves between draws. The same seed need not repeat a
    run: episodes side by side share the engine's batches, and load changes how (CI saw it)."""
    from areal_devkit import runtime_facade

    seeds: list[dict[str, int]] = []
    real = runtime_facade.engine_from_spec

    def engine_from_spec(spec, **kwargs):
        seeds.append({k: v for k, v in kwargs.items() if k == "seed"})
        return real(spec, **kwargs)

    monkeypatch.setattr(runtime_facade, "engine_from_spec", engine_from_spec)

    def completions(*seed: str) -> list[list[int]]:
        out = tmp_path / f"t{'-'.join(seed) or 'none'}.jsonl"
        proc = devkit_main(
            "run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--limit", "32",
            "--group-size", "4", "--temperature", "1", "--output", str(out), *seed,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        records = [json.loads(line) for line in out.read_text().splitlines()]
        return sorted(r["input_ids"] for r in records)

    assert completions("--seed", "3") != completions("--seed", "4")
    completions()
    assert seeds == [{"seed": 3}, {"seed": 4}, {}]


@pytest.mark.parametrize(
    ("command", "engine", "message"),
    [
        ("run", "scripted", "--engine scripted samples nothing"),
        ("check", "sglang:127.0.0.1:1", "samples with its own seed"),
    ],
)
def test_seed_is_refused_where_it_cannot_reach_the_sampling(command, engine, message, devkit_main):
    proc = devkit_main(
        command, "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--engine", engine,
        "--seed", "3",
    )  # fmt: skip
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
