# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit train``: outputs, workflow kinds and the errors a person can make."""

import json
import os
import re
from pathlib import Path

import pytest

from areal_devkit.cli import main

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
RLVR = "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow"
HELPERS = str(HERE / "train_workflows.py")
TOOL_AGENT = "areal_runtime.workflow.openai.math_agent:MathToolAgent"
SMALL = ["--steps", "2", "--batch-size", "2", "--group-size", "4", "--quiet"]


def test_writes_metrics_checkpoint_trajectories_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    metrics, plot, save = tmp_path / "m.jsonl", tmp_path / "r.png", tmp_path / "ckpt"
    code = main(
        ["train", RLVR, *SMALL, "--steps", "3", "--metrics-out", str(metrics),
         "--plot", str(plot), "--save", str(save)]
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2, 3]
    for key in ("reward_mean", "reward_std", "accepted", "rejected", "importance_ratio_mean",
                "importance_ratio_max", "clip_fraction", "approx_kl", "entropy",
                "staleness_mean", "rollout_tokens_per_s", "train_tokens_per_s", "step_seconds"):  # fmt: skip
        assert all(isinstance(m[key], int | float) for m in lines), key
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "reward" in out and "steps" in out  # the summary table
    # a group's samples share their prompt's blocks (flushed at each of the 3 weight updates)
    cache = re.search(r"prefix cache: (\d+)% of \d+ prompt tokens reused", out)
    assert cache and int(cache.group(1)) > 0, out
    # The checkpoint loads with both LocalEngine and transformers.
    from transformers import AutoModelForCausalLM

    from areal_runtime.engine.local import LocalEngine

    AutoModelForCausalLM.from_pretrained(str(save))
    LocalEngine.from_pretrained(save).close()
    assert json.loads((save / "trainer_state.json").read_text())["step"] == 3
    # The last step's trajectories, in run --output's format, open in the viewer.
    from areal_devkit.viewer import episodes_from_file

    episodes = episodes_from_file(save / "trajectories.jsonl")
    assert len(episodes) == 2  # one step of two groups


@pytest.mark.parametrize(
    "workflow", [f"{HELPERS}:MultiTurnArithmetic", f"{HELPERS}:ArithmeticAgent"]
)
def test_multi_turn_and_agent_workflows_train(workflow, tmp_path):
    metrics = tmp_path / "m.jsonl"
    assert main(["train", workflow, *SMALL, "--metrics-out", str(metrics)]) == 0
    lines = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert len(lines) == 2 and all(m["train_tokens"] > 0 for m in lines)


def test_inconsistent_trajectories_are_refused_unless_allowed(capsys):
    code = main(["train", f"{HELPERS}:ShiftedMaskWorkflow", *SMALL])
    err = capsys.readouterr().err
    assert code == 1
    assert "FAIL" in err and "loss-mask" in err and "--allow-mismatch" in err
    assert main(["train", f"{HELPERS}:ShiftedMaskWorkflow", *SMALL, "--allow-mismatch"]) == 0


def test_workflow_without_logprobs_is_exit_2_naming_the_key(capsys):
    assert main(["train", f"{HELPERS}:NoLogprobsWorkflow", *SMALL]) == 2
    err = capsys.readouterr().err
    assert "['logprobs']" in err and "resp.output_logprobs" in err
    assert "Traceback" not in err


def test_dataset_without_the_rewards_field_is_exit_2(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "What is 1+2?"}]}) + "\n")
    kwargs = json.dumps({"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"})
    assert main(["train", RLVR, "--data", str(data), "--kwargs", kwargs, *SMALL]) == 2
    err = capsys.readouterr().err
    assert "no ['answer'] field" in err and "arithmetic_reward" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--steps", "0"], "--steps must be >= 1"),
        (["--batch-size", "0"], "--batch-size must be >= 1"),
        (["--temperature", "0"], "--temperature must be > 0"),
        (["--engine", "sglang:127.0.0.1:1"], "only a local engine"),
        (["--plot", "x.pdf"], "--plot must end in .png"),
    ],
)
def test_bad_flags_are_exit_2(flags, message, capsys):
    assert main(["train", RLVR, "--quiet", *flags]) == 2
    assert message in capsys.readouterr().err


def test_non_writable_save_is_exit_2(tmp_path, capsys, monkeypatch):
    target = tmp_path / "ro" / "ckpt"
    target.parent.mkdir()
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda p, m: False if Path(p) == target.parent else real(p, m)
    )
    assert main(["train", RLVR, "--quiet", "--save", str(target)]) == 2
    assert "no permission to write" in capsys.readouterr().err
    file = tmp_path / "f"
    file.write_text("")
    assert main(["train", RLVR, "--quiet", "--save", str(file / "ckpt")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_summary_says_why_episodes_were_rejected_and_how_to_see_them(capsys):
    flags = ["--steps", "3", "--batch-size", "4", "--group-size", "2", "--quiet"]
    assert main(["train", f"{HELPERS}:SometimesFailing", *flags]) == 0
    out = capsys.readouterr().out
    # A group of --group-size samples is rejected whole: counted in groups, with the reasons (a
    # group can also be dropped as stale on a busy machine).
    rejected = re.search(
        r"; (\d+) groups? of 2 episodes rejected \([\d.]+% of \d+\): (.+)$", out, re.M
    )
    assert rejected, out
    reasons = dict(reversed(item.split(" ", 1)) for item in rejected.group(2).split(", "))
    assert sum(int(n) for n in reasons.values()) == int(rejected.group(1))
    assert set(reasons) <= {"exception", "stale"} and int(reasons["exception"]) > 0, out
    count = re.search(
        r"^\s+(\d+) x exception: ValueError: multiples of 5 are not supported$", out, re.M
    )
    assert count and count.group(1) == reasons["exception"]
    assert (
        f"see each rejection with its traceback: areal-devkit run {HELPERS}:SometimesFailing" in out
    )


def test_rejections_are_counted_in_the_unit_they_happen_in_with_their_reasons():
    from areal_devkit.training_report import STALE, rejected_line

    # 276 groups of 8 two-turn episodes trained on (4,416 rows), 5 dropped: 1.8% of the groups,
    # not 5 of 4,421.
    steps = [
        {"rejected": 3, "accepted": 138, "samples": 2208, "group_size": 8, "rejected_by_reason": {"stale": 3}},
        {"rejected": 2, "accepted": 138, "samples": 2208, "group_size": 8, "rejected_by_reason": {"stale": 1, "exception": 1}},
    ]  # fmt: skip
    assert rejected_line(steps) == (
        "5 groups of 8 episodes rejected (1.8% of 281): 4 stale, 1 exception"
    )
    one = [{"rejected": 1, "accepted": 99, "samples": 99, "rejected_by_reason": {"empty": 1}}]
    assert rejected_line(one) == "1 episode rejected (1.0% of 100): 1 empty"
    assert rejected_line([{**one[0], "rejected": 0, "rejected_by_reason": {}}]) == (
        "0 episodes rejected"
    )
    assert (
        "--max-staleness" in STALE and "max_head_offpolicyness" in STALE
    )  # train's flag, AReaL's key


def test_throughput_counts_episodes_and_names_rows_apart():
    from areal_devkit.training_report import throughput

    # 2 steps of 8 groups of 8 two-turn episodes: 128 episodes, 256 trained rows, in 10 s
    agent = [{"accepted": 8, "group_size": 8, "samples": 128}] * 2
    assert throughput(agent, 10.0) == "12.8 episodes/s (25.6 trained rows/s)"
    single = [{"accepted": 64, "group_size": 1, "samples": 64}]  # one row an episode
    assert throughput(single, 4.0) == "16.0 episodes/s"
    assert throughput(single, 0.0) == "0.0 episodes/s"


def test_statistics_under_fileroot_feed_the_plot_the_viewer_and_a_resume(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from areal_runtime.utils.stats_logger import read_stats

    plot = tmp_path / "r.png"
    args = [*SMALL, "--fileroot", str(tmp_path), "--trial-name", "t1", "--recover-every", "1"]
    assert main(["train", RLVR, *args, "--plot", str(plot)]) == 0
    (folder,) = tmp_path.glob("logs/*/areal-devkit-train/t1")
    rows = read_stats(folder)
    assert [r["global_step"] for r in rows] == [1, 2]
    assert all("ppo_actor/update/importance_weight/avg" in r for r in rows)
    assert f"statistics: {folder / 'stats.jsonl'}" in capsys.readouterr().out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The viewer reads the same folder.
    assert main(["view", str(folder)]) == 0
    page = (folder / "training.html").read_text()
    assert page.count("<svg") >= 5 and "reward (train)" in page
    # Same command, more steps: it resumes after step 2 instead of starting over.
    assert main(["train", RLVR, *args, "--steps", "3"]) == 0
    assert "after step 2/3" in capsys.readouterr().out
    assert [r["global_step"] for r in read_stats(folder)] == [1, 2, 3]


def test_recover_without_a_trial_name_is_a_usage_error(capsys):
    assert main(["train", RLVR, *SMALL, "--recover-every", "2"]) == 2
    assert "--recover-every needs --trial-name" in capsys.readouterr().err


def test_steps_without_reward_variance_are_warned_once_and_counted_in_the_summary(capsys):
    """Found: every step had all-zero rewards (nothing to learn) and train said nothing."""
    assert main(["train", f"{HELPERS}:ConstantRewardWorkflow", *SMALL, "--steps", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("every sample of each prompt got the same reward") == 1
    assert "step 1:" in captured.err and "the model cannot do the task yet" in captured.err
    assert "warning: 3 of 3 steps had no reward variance in any group" in captured.out
    assert main(["train", RLVR, *SMALL, "--batch-size", "4"]) == 0  # varied rewards: no warning
    captured = capsys.readouterr()
    assert "no reward variance" not in captured.out + captured.err


def test_a_workflow_that_blocks_the_event_loop_is_warned_with_its_episode_and_line(capsys):
    """Found: train ran with the stall detector off, so a blocking call showed only as slow
    steps. Groups of 4: the line is named for the episode whose member blocked."""
    assert main(["train", f"{HELPERS}:BlocksTheLoop", *SMALL]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: the workflow blocked the event loop \d+ times while training", err)
    assert re.search(
        r"blocked for \d+ ms by episode \d+ \(BlocksTheLoop\) at .*train_workflows", err
    )
    assert "time.sleep(0.15)" in err
    assert main(["train", f"{HELPERS}:BlocksTheLoop", *SMALL, "--stall-threshold-ms", "0"]) == 0
    assert "blocked the event loop" not in capsys.readouterr().err
    assert main(["train", RLVR, *SMALL]) == 0
    assert "blocked the event loop" not in capsys.readouterr().err


def test_tool_agents_start_less_flattened_and_a_users_own_data_from_the_shipped_weights():
    """The shipped model calls a tool it reads almost always: a tool agent's room to learn is
    a flattened head too, less flattened than the arithmetic task's (its call is ~45 tokens)."""
    from areal_devkit.commands.train import make_engine
    from areal_devkit.commands.workflow_args import passes_tools
    from areal_runtime.workflow.openai.math_agent import MathAgent, MathToolAgent
    from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow

    assert passes_tools(MathToolAgent) and passes_tools(MathToolAgent())
    assert not passes_tools(MathAgent)
    assert not passes_tools(ArithmeticRLVRWorkflow)
    _, arithmetic = make_engine(None, data=False, seed=0)
    _, tool_agent = make_engine(None, data=False, seed=0, tool_agent=True)
    _, own = make_engine(None, data=True, seed=0, tool_agent=True)
    assert arithmetic == "the under-confident arithmetic model"
    assert tool_agent == "the under-confident default model (logits x0.55)"
    assert own == "the embedded default model"


@pytest.mark.parametrize(
    ("workflow", "chosen", "shown"),
    [
        (TOOL_AGENT, [], "lr 0.0001,"),
        (TOOL_AGENT, ["--lr", "3e-4"], "lr 0.0003,"),
        (TOOL_AGENT, ["actor.optimizer.lr=2e-4"], "lr 0.0002,"),
        (RLVR, [], "lr 0.0003,"),  # the arithmetic task keeps train's default
    ],
)
def test_a_tool_agent_learns_at_the_tool_agent_lr_unless_one_is_chosen(
    workflow, chosen, shown, capsys
):
    """At train's 3e-4 a tool agent's entropy grew and one run fell to 0 (TOOL_AGENT_LR)."""
    one_step = ["--steps", "1", "--batch-size", "1", "--group-size", "2", "--quiet"]
    assert main(["train", workflow, *one_step, *chosen]) == 0
    assert shown in capsys.readouterr().err
