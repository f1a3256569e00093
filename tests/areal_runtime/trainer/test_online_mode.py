# SPDX-License-Identifier: Apache-2.0
"""``rollout.agent.mode: online``: ``PPOTrainer(config).train()`` with no dataset or workflow
trains on the sessions an outside client runs on its gateway, as AReaL's online mode."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from areal_runtime.api.cli_args import GRPOConfig, OptimizerConfig
from areal_runtime.trainer.loop import TrainingInputError

ADMIN = "sk-online-tests"


def online_config(**overrides) -> GRPOConfig:
    c = GRPOConfig(seed=1, total_train_steps=2, total_train_epochs=1)
    c.rollout.agent.mode = "online"
    c.rollout.agent.admin_api_key = ADMIN
    c.train_dataset.batch_size = c.rollout.consumer_batch_size = 1
    c.gconfig = c.gconfig.new(n_samples=1, max_new_tokens=4)
    c.actor.path = "default"
    c.actor.optimizer = OptimizerConfig(lr=1e-3)
    for name, value in overrides.items():
        setattr(c, name, value)
    return c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def outside_client(url: str, episodes: int, rewards: list[float]) -> None:
    """An agent outside the trainer: one key, refreshed after each episode (openclaw's way)."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=url, timeout=120) as client:
        for _ in range(600):
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        key = None
        for episode in range(episodes + 1):  # the last refresh hands the last episode on
            body = {"task_id": "outside", **({"api_key": key} if key else {})}
            started = client.post("/rl/start_session", json=body, headers=admin)
            if episode == episodes:  # handed on; the trainer may have finished meanwhile
                assert started.status_code in (200, 503), started.text
                return
            assert started.status_code == 200, started.text
            key = started.json()["api_key"]
            auth = {"Authorization": f"Bearer {key}"}
            chat = {"model": "m", "messages": [{"role": "user", "content": "2+2?"}]}
            assert client.post("/v1/chat/completions", json=chat, headers=auth).status_code == 200
            reward = {"reward": rewards[episode]}
            assert client.post("/rl/set_reward", json=reward, headers=auth).status_code == 200


@pytest.mark.slow
def test_online_training_learns_from_sessions_an_outside_client_runs(monkeypatch) -> None:
    from areal_runtime import PPOTrainer

    port = free_port()
    monkeypatch.setenv("AREAL_GATEWAY_PORT", str(port))
    client = threading.Thread(
        target=outside_client, args=(f"http://127.0.0.1:{port}", 2, [1.0, 0.25]), daemon=True
    )
    client.start()
    with PPOTrainer(online_config()) as trainer:
        history = trainer.train()
    client.join(timeout=10)
    assert not client.is_alive()  # its last refresh was answered when training ended
    assert [round(r.metrics["reward_mean"], 2) for r in history] == [1.0, 0.25]
    assert trainer.engine.get_version() == 2
    assert trainer.consistency is not None and trainer.consistency.ok


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"total_train_steps": None}, "set total_train_steps"),
        ({"total_train_steps": 2, "total_train_epochs": 3}, "must be >= total_train_epochs"),
    ],
)
def test_online_mode_needs_a_step_count_as_in_areal(overrides, message) -> None:
    from areal_runtime import PPOTrainer

    with pytest.raises(TrainingInputError, match=message):
        PPOTrainer(online_config(**overrides))


def test_online_mode_refuses_a_validation_set_and_a_workflow() -> None:
    from areal_runtime import PPOTrainer
    from areal_runtime.api.cli_args import ValidDatasetConfig

    with pytest.raises(TrainingInputError, match="valid_dataset must not be set"):
        PPOTrainer(online_config(valid_dataset=ValidDatasetConfig()))
    with PPOTrainer(online_config()) as trainer, pytest.raises(TrainingInputError, match="without"):
        trainer.train(workflow="examples.arithmetic_rlvr:ArithmeticRLVRWorkflow")


def test_a_dataset_is_still_required_outside_online_mode() -> None:
    from areal_runtime import PPOTrainer

    c = online_config()
    c.rollout.agent.mode = "inline"
    with pytest.raises(TrainingInputError, match="needs a train_dataset"):
        PPOTrainer(c)


def test_an_unset_optimizer_is_refused_before_the_gateway_serves_as_areal_cannot_train(
    capsys,
) -> None:
    """AReaL's actor.optimizer defaults to None; its engine then has no optimizer and the first
    update fails. Here train() refuses before any session can start, never training at a
    made-up learning rate."""
    from areal_runtime import PPOTrainer

    c = online_config()
    c.actor.optimizer = None
    with PPOTrainer(c) as trainer, pytest.raises(TrainingInputError, match="optimizer is unset"):
        trainer.train()
    assert "Proxy gateway available" not in capsys.readouterr().out
    assert trainer.engine.get_version() == 0
