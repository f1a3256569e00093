# SPDX-License-Identifier: Apache-2.0
"""``rollout.agent.mode`` is read once, by ``AgentConfig``, and mapped for the executor there."""

from types import SimpleNamespace

import pytest

from areal_runtime.api.cli_args import GRPOConfig
from areal_runtime.api.experiment_config import AgentConfig
from areal_runtime.infra.workflow_executor import RolloutConfig


@pytest.mark.parametrize(
    ("mode", "executor_mode"), [("inline", "inline"), ("subproc", "subproc"), ("online", "inline")]
)
def test_each_mode_maps_to_the_executors_and_passes_the_proxy_options(mode, executor_mode):
    agent = AgentConfig(mode=mode, turn_discount=0.5, subproc_max_workers=2)
    settings = agent.executor_settings()
    assert agent.online == (mode == "online")
    assert settings["agent_mode"] == executor_mode
    assert settings["agent_options"]["turn_discount"] == 0.5
    assert settings["agent_options"]["subproc_max_workers"] == 2
    assert RolloutConfig(**settings).agent_mode == executor_mode  # the executor accepts it


def trainer_config(agent) -> GRPOConfig:
    c = GRPOConfig(total_train_steps=4, total_train_epochs=2)
    c.actor.path = "/nonexistent/model"
    c.rollout.agent = agent
    return c


def test_the_trainer_checks_rollout_agent_before_loading_the_actor():
    from areal_runtime.trainer.rl_trainer import PPOTrainer

    with pytest.raises(ValueError, match=r"unknown key\(s\) \['turn_discont'\]"):
        PPOTrainer(trainer_config({"turn_discont": 0.9}), [{}])


def test_a_mapping_for_rollout_agent_is_read_once_into_an_agent_config():
    import torch

    from areal_runtime.trainer.rl_trainer import PPOTrainer

    engine = SimpleNamespace(model=torch.nn.Linear(1, 1), tokenizer=None)
    trainer = PPOTrainer(trainer_config({"mode": "online", "turn_discount": 0.5}), engine=engine)
    assert isinstance(trainer.agent, AgentConfig) and trainer.online
    assert trainer.agent.turn_discount == 0.5
    assert len(trainer.train_dataset) == 2  # an epoch's worth of rows: 4 steps // 2 epochs x 1
