# SPDX-License-Identifier: Apache-2.0
"""``Learner``'s three verbs (AReaL's actor: compute_logp, compute_advantages, ppo_update)."""

import copy

import pytest
import torch

from areal_runtime.api.cli_args import GRPOConfig, NormConfig, OptimizerConfig
from areal_runtime.trainer.learner import Learner
from areal_runtime.trainer.ppo_batch import prepare_batch

SIZE, LENGTH, PROMPT = 4, 12, 7


def groups() -> list[dict]:
    gen = torch.Generator().manual_seed(3)
    out = []
    for g in range(2):
        mask = torch.zeros(SIZE, LENGTH, dtype=torch.int32)
        mask[:, PROMPT:] = 1
        out.append(
            {
                "input_ids": torch.randint(3, 400, (SIZE, LENGTH), generator=gen),
                "loss_mask": mask,
                "attention_mask": torch.ones(SIZE, LENGTH, dtype=torch.bool),
                "logprobs": -torch.rand(SIZE, LENGTH, generator=gen) * mask - mask,
                "versions": torch.where(mask.bool(), 0, -1),
                "rewards": torch.tensor([float((g + i) % 2) for i in range(SIZE)]),
            }
        )
    return out


@pytest.fixture(scope="module")
def model():
    from areal_runtime.models.default_model import load_underconfident_model

    torch.set_num_threads(1)
    return load_underconfident_model()[0]


def config() -> GRPOConfig:
    c = GRPOConfig(seed=1)
    c.actor.optimizer = OptimizerConfig(lr=1e-3)
    c.actor.ppo_n_minibatches = 2
    c.actor.recompute_logprob = True
    c.actor.use_decoupled_loss = True
    c.actor.reward_norm = NormConfig(mean_level="group", std_level="group", group_size=SIZE)
    return c


def test_the_three_verbs_by_hand_train_as_step_does(model):
    by_step = Learner(copy.deepcopy(model), config(), total_steps=2)
    by_hand = Learner(copy.deepcopy(model), config(), total_steps=2)
    metrics = by_step.step(groups(), version=1)
    batch = prepare_batch(groups(), by_hand.generator, by_hand.config.actor.ppo_n_minibatches)
    by_hand.compute_logp(batch)
    by_hand.compute_advantages(batch)
    update = by_hand.ppo_update(batch, version=1)
    assert update.loss == metrics["loss"]
    assert len(update.grad_norms) == 2 and max(update.grad_norms) == metrics["grad_norm"]
    moved = False
    for p, q, start in zip(
        by_step.model.parameters(), by_hand.model.parameters(), model.parameters(), strict=True
    ):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
        moved = moved or not torch.equal(p, start)
    assert moved  # the update changed the weights


def test_compute_logp_recomputes_the_proximal_policy_before_any_update(model):
    learner = Learner(copy.deepcopy(model), config(), total_steps=2)
    batch = prepare_batch(groups(), learner.generator, 2)
    learner.compute_logp(batch)
    assert batch.fill_prox_in_update and batch.prox is not None
    first, rest = batch.minibatches[0], torch.cat(batch.minibatches[1:])
    trained = batch.loss_mask
    # The other minibatch has the model's logprobs; the first keeps the behaviour's until its
    # own update forward fills them in.
    assert not torch.equal(batch.prox[rest][trained[rest]], batch.behave[rest][trained[rest]])
    assert torch.equal(batch.prox[first], batch.behave[first])
    assert batch.old is batch.behave  # decoupled: the loss's old policy is the behaviour's
    learner.compute_advantages(batch)
    learner.ppo_update(batch, version=1)
    assert not torch.equal(batch.prox[first][trained[first]], batch.behave[first][trained[first]])


def test_compute_advantages_give_group_normalised_rewards_on_trained_tokens_only(model):
    learner = Learner(copy.deepcopy(model), config(), total_steps=2)
    batch = prepare_batch(groups(), learner.generator, 2)
    learner.compute_logp(batch)
    stats = learner.compute_advantages(batch)
    assert batch.advantages is not None and batch.score is not None
    assert torch.all(batch.advantages[~batch.loss_mask] == 0)
    for g in range(2):
        assert float(batch.score[batch.group_ids == g].mean()) == pytest.approx(0.0, abs=1e-6)
    assert stats["ppo_actor/n_seqs"] == 2 * SIZE
    assert stats["ppo_actor/n_valid_tokens"] == 2 * SIZE * (LENGTH - PROMPT)
