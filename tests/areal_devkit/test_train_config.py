# SPDX-License-Identifier: Apache-2.0
"""``train``'s config route: AReaL YAMLs through load_expr_config, flags as overrides on it."""

import json
from pathlib import Path

import pytest

from areal_devkit.cli import main, parse_args
from areal_devkit.commands.train_config import default_epochs, load_train_config

ROOT = Path(__file__).resolve().parents[2]
LAPTOP = str(ROOT / "examples" / "agent_workflow" / "config_laptop.yaml")
GSM8K = str(ROOT / "examples" / "gsm8k" / "gsm8k_grpo_laptop.yaml")
RLVR = "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow"
AGENT = "areal_runtime.workflow.openai.math_agent.MathAgent"


def loaded(*argv):
    return load_train_config(parse_args(["train", RLVR, *argv]))


def test_without_config_the_defaults_are_the_bundled_tasks():
    args = parse_args(["train", RLVR])
    config = load_train_config(args)
    default_epochs(config, 961, args)
    assert config.total_train_steps == 100 and config.total_train_epochs == 2
    assert config.train_dataset.batch_size == config.rollout.consumer_batch_size == 8
    assert config.gconfig.n_samples == config.actor.reward_norm.group_size == 8
    assert (config.gconfig.max_new_tokens, config.gconfig.temperature) == (8, 1.0)
    assert config.actor.optimizer.lr == pytest.approx(3e-4)
    assert (config.actor.ppo_n_minibatches, config.actor.eps_clip) == (2, 0.2)
    assert config.rollout.max_head_offpolicyness == 1 and config.seed == 1
    assert config.actor.rejection_sampling.level == "token" and config.actor.adv_norm is None
    assert config.trial_name.startswith("run-") and config.recover.mode == "disabled"
    assert config.stats_logger.trial_name == config.trial_name
    assert config.stats_logger.fileroot == "/tmp/areal/experiments"
    assert config.ref is None


def test_each_flag_is_an_override_of_its_keys():
    config = loaded(
        "--steps", "5", "--batch-size", "3", "--group-size", "4", "--lr", "1e-5",
        "--temperature", "0.7", "--kl-ctl", "0.1", "--fileroot", "/tmp/a b",
        "--trial-name", "t1", "--recover-every", "2",
    )  # fmt: skip
    assert config.total_train_steps == 5
    assert config.train_dataset.batch_size == config.rollout.consumer_batch_size == 3
    assert config.gconfig.n_samples == config.actor.reward_norm.group_size == 4
    assert config.actor.optimizer.lr == pytest.approx(1e-5)
    assert config.gconfig.temperature == config.actor.temperature == 0.7
    assert config.actor.kl_ctl == 0.1 and config.ref is not None  # KL needs its reference
    assert config.stats_logger.fileroot == config.recover.fileroot == "/tmp/a b"
    assert config.trial_name == config.recover.trial_name == "t1"
    assert (config.recover.mode, config.recover.freq_steps) == ("auto", 2)


def test_an_areal_yaml_loads_as_it_is_and_overrides_change_it():
    config = loaded("--config", LAPTOP)
    assert config.experiment_name == "agent-quickstart" and config.trial_name == "trial0"
    assert config.total_train_steps == 60 and config.actor.path == "underconfident"
    assert config.workflow == RLVR  # the WORKFLOW argument is the file's workflow key
    changed = loaded(
        "--config", LAPTOP, "actor.optimizer.lr=1e-4", "gconfig.n_samples=3", "--steps", "7"
    )
    assert changed.actor.optimizer.lr == pytest.approx(1e-4)
    assert changed.actor.reward_norm.group_size == 3  # the file's ${gconfig.n_samples}
    assert changed.total_train_steps == 7 and changed.experiment_name == "agent-quickstart"
    gsm8k = loaded("--config", GSM8K)
    assert gsm8k.total_train_steps is None and gsm8k.actor.reward_scaling == 10.0


def test_without_config_a_plain_override_may_set_any_key():
    config = loaded("actor.reward_scaling=2.0", "total_train_epochs=3")
    assert config.actor.reward_scaling == 2.0
    args = parse_args(["train", RLVR, "total_train_epochs=3"])
    config = load_train_config(args)
    default_epochs(config, 961, args)
    assert config.total_train_epochs == 3  # an explicit value is not recomputed


def test_overrides_stand_anywhere_among_the_flags():
    args = parse_args(["train", RLVR, "seed=3", "--quiet", "+a.b=1", "--lr", "1", "~c"])
    assert args.overrides == ["seed=3", "+a.b=1", "~c"] and args.quiet and args.lr == 1.0
    with pytest.raises(SystemExit):
        parse_args(["train", RLVR, "not-an-override"])
    with pytest.raises(SystemExit):
        parse_args(["run", RLVR, "seed=3"])  # only train takes overrides


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--steps", "3", "total_train_steps=4"], ["--steps 3", "total_train_steps=4"]),
        (["--batch-size", "2", "rollout.consumer_batch_size=4"],
         ["--batch-size 2", "rollout.consumer_batch_size=4"]),
        (["--config", LAPTOP, "--lr", "1e-4", "++actor.optimizer.lr=0.01"],
         ["--lr 0.0001", "actor.optimizer.lr=0.01"]),
        (["workflow=examples.other:Flow"], ["WORKFLOW argument", "workflow=examples.other:Flow"]),
    ],
)  # fmt: skip
def test_a_flag_and_an_override_that_disagree_are_exit_2_naming_both(argv, names, capsys):
    assert main(["train", RLVR, "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert "disagree" in err and all(name in err for name in names), err
    assert "Traceback" not in err


def test_a_flag_and_an_override_that_agree_are_accepted():
    config = loaded(
        "--steps", "3", "total_train_steps=3", "--lr", "1e-4", "actor.optimizer.lr=0.0001"
    )
    assert config.total_train_steps == 3 and config.actor.optimizer.lr == pytest.approx(1e-4)


@pytest.mark.parametrize("config", [[], ["--config", LAPTOP]])
def test_a_bad_key_is_exit_2_naming_the_key_and_the_fix(config, capsys):
    assert main(["train", RLVR, *config, "actor.optimizer.lrr=1e-4", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown config key 'actor.optimizer.lrr'" in err
    assert "did you mean 'actor.optimizer.lr'" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_a_missing_config_file_is_exit_2(tmp_path, capsys):
    assert main(["train", RLVR, "--config", str(tmp_path / "no.yaml"), "--quiet"]) == 2
    assert "no.yaml does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_areal_agent_example_yaml_trains_two_steps(tmp_path, capsys):
    metrics = tmp_path / "m.jsonl"
    code = main(
        ["train", AGENT, "--config", LAPTOP, "total_train_steps=2", "train_dataset.batch_size=2",
         "--group-size", "4", "--fileroot", str(tmp_path), "--metrics-out", str(metrics),
         "--quiet"]
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2] and all(m["train_tokens"] > 0 for m in lines)
    # the file's experiment and trial names, under the flag's fileroot
    assert list(tmp_path.glob("logs/*/agent-quickstart/trial0/stats.jsonl"))
    err = capsys.readouterr().err
    assert "from the under-confident arithmetic model (" in err and "2 steps x 2 groups x 4" in err


def test_the_yaml_dataset_is_the_users_so_its_reward_is_not_assumed(capsys):
    """gsm8k_grpo_laptop.yaml's train_dataset.path is GSM8K-style rows: not arithmetic."""
    workflow = "areal_runtime.workflow.rlvr.RLVRWorkflow"
    assert main(["train", workflow, "--config", GSM8K, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "needs reward_fn" in err and "with your own dataset" in err
