# SPDX-License-Identifier: Apache-2.0
"""``rollout.agent`` changes what PPOTrainer trains on, as it does in AReaL."""

import os
import re
from pathlib import Path

import pytest
import torch

from areal_devkit.commands.train import default_task_rows
from areal_runtime.api.cli_args import AgentConfig, GRPOConfig, NormConfig, OptimizerConfig

GROUP = 2


@pytest.fixture
def agent(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).with_name("agents")))
    from trainer_agents import TwoTurnAgent

    return TwoTurnAgent()


def trained_groups(agent, fixed_reward=None, **settings):
    """The trajectories of one training step with ``rollout.agent`` = ``settings``."""
    from areal_runtime import PPOTrainer

    c = GRPOConfig(seed=2, total_train_steps=1, total_train_epochs=1)
    c.gconfig = c.gconfig.new(n_samples=GROUP, max_new_tokens=5)
    c.train_dataset.batch_size = c.rollout.consumer_batch_size = 2
    c.actor.path = "underconfident"
    c.actor.optimizer = OptimizerConfig(lr=1e-5)
    c.actor.reward_norm = NormConfig(mean_level="group", std_level=None, group_size=GROUP)
    c.rollout.agent = settings or None
    rows = default_task_rows()[:4]
    if fixed_reward is not None:
        rows = [{**r, "fixed_reward": fixed_reward} for r in rows]
    with PPOTrainer(c, rows) as trainer:
        history = trainer.train(workflow=agent, console=False)
        tokenizer = trainer.tokenizer
    groups = [record.trajectory for record in history[0].records]
    return groups, history[0].metrics, tokenizer


def segments(mask: torch.Tensor) -> int:
    """How many separate runs of trained tokens a row has."""
    m = mask.int().tolist()
    return sum(1 for i, v in enumerate(m) if v and (i == 0 or not m[i - 1]))


pytestmark = pytest.mark.slow


def test_individual_export_trains_each_completion_as_its_own_sequence(agent):
    groups, metrics, _ = trained_groups(agent)
    for g in groups:
        assert g["input_ids"].shape[0] == 2 * GROUP  # two completions per episode
        assert all(segments(row) == 1 for row in g["loss_mask"])
    assert metrics["ppo_actor/n_seqs"] == 2 * 2 * GROUP


def test_concat_export_trains_one_sequence_per_episode(agent):
    groups, metrics, _ = trained_groups(agent, export_style="concat", chat_template_type="concat")
    for g in groups:
        assert g["input_ids"].shape[0] == GROUP
        # Both replies in one sequence, the user turn between them masked out.
        assert all(segments(row) == 2 for row in g["loss_mask"])
    assert metrics["ppo_actor/n_seqs"] == 2 * GROUP


def test_turn_discount_scales_the_earlier_turns_reward(agent):
    plain, _, _ = trained_groups(agent, fixed_reward=1.0)
    discounted, _, _ = trained_groups(agent, fixed_reward=1.0, turn_discount=0.5)
    for g in plain:
        assert g["rewards"].tolist() == [1.0] * (2 * GROUP)
    for g in discounted:  # [first turn, last turn] per episode, in order
        assert g["rewards"].tolist() == [0.5, 1.0] * GROUP


@pytest.mark.parametrize("mode", ["inline", "subproc"])
def test_mode_runs_the_agent_in_this_process_or_a_worker(agent, mode):
    groups, metrics, tokenizer = trained_groups(agent, mode=mode)
    text = tokenizer.decode(groups[0]["input_ids"][0].tolist())
    pid = int(re.search(r"\[pid (\d+)\]", text).group(1))
    assert (pid == os.getpid()) == (mode == "inline")
    assert metrics["train_tokens"] > 0


def test_bad_agent_settings_are_refused_before_training(agent):
    with pytest.raises(ValueError, match=r"export_style.*'individual', 'concat'"):
        trained_groups(agent, export_style="tree")
    with pytest.raises(ValueError, match="turn_discount must be in"):
        trained_groups(agent, turn_discount=0)
    with pytest.raises(
        ValueError, match=r"mode is 'remote'; use one of \['inline', 'subproc', 'online'\]"
    ):
        AgentConfig(mode="remote")
    assert AgentConfig.of({"mode": "online"}).mode == "online"  # trainer/online.py
    with pytest.raises(ValueError, match=r"chat_template_type='concat'"):
        AgentConfig.of({"export_style": "concat"})
    with pytest.raises(ValueError, match="unknown key"):
        AgentConfig.of({"turn_discont": 0.9})
    with pytest.raises(ValueError, match="tool_call_parser"):
        AgentConfig.of({"tool_call_parser": "llama4"})
    # AReaL's cluster-side keys load and do nothing here.
    assert AgentConfig.of({"agent_cls_path": "x.Y", "mode": "subproc"}).mode == "subproc"
