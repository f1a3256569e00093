# SPDX-License-Identifier: Apache-2.0
"""The proximal logprobs taken from the first minibatch's own forward change nothing."""

import copy

import pytest
import torch

from areal_runtime.api.cli_args import GRPOConfig, NormConfig, OptimizerConfig
from areal_runtime.trainer.learner import Learner


def groups(n_groups: int = 4, size: int = 4, length: int = 14) -> list[dict]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for g in range(n_groups):
        ids = torch.randint(3, 400, (size, length), generator=gen)
        mask = torch.zeros(size, length, dtype=torch.int32)
        mask[:, 8:] = 1
        out.append(
            {
                "input_ids": ids,
                "loss_mask": mask,
                "attention_mask": torch.ones(size, length, dtype=torch.bool),
                "logprobs": -torch.rand(size, length, generator=gen) * mask,
                "versions": torch.where(mask.bool(), 0, -1),
                "rewards": torch.tensor([float((g + i) % 2) for i in range(size)]),
            }
        )
    return out


@pytest.mark.parametrize("decoupled", [True, False])
def test_fused_proximal_logprobs_give_the_same_update(decoupled):
    from areal_runtime.models.default_model import load_underconfident_model

    torch.set_num_threads(1)
    model, _ = load_underconfident_model()
    config = GRPOConfig(seed=1)
    config.actor.optimizer = OptimizerConfig(lr=1e-3)
    config.actor.ppo_n_minibatches = 2
    config.actor.recompute_logprob = True
    config.actor.use_decoupled_loss = decoupled
    config.actor.reward_norm = NormConfig(mean_level="group", std_level="group", group_size=4)
    fused = Learner(copy.deepcopy(model), config, total_steps=4)
    plain = Learner(copy.deepcopy(model), config, total_steps=4)
    assert fused.dropout_free
    plain.dropout_free = False  # the extra forward over the whole batch, as before
    rows_seen = {"fused": 0, "plain": 0}

    def counter(name):
        def count(module, args, kwargs):
            rows_seen[name] += kwargs["input_ids"].shape[0]

        return count

    # The decoder: the forward runs it alone when the LM head is needed at trained tokens only.
    fused.model.get_decoder().register_forward_pre_hook(counter("fused"), with_kwargs=True)
    plain.model.get_decoder().register_forward_pre_hook(counter("plain"), with_kwargs=True)
    batch = groups()
    a, b = fused.step(batch, version=1), plain.step(batch, version=1)
    # 16 sequences: the plain step runs 16 (proximal) + 16 (update); the fused one 8 + 16.
    assert rows_seen == {"fused": 24, "plain": 32}
    for key in ("loss", "importance_ratio_mean", "importance_ratio_max", "clip_fraction"):
        assert a[key] == pytest.approx(b[key], abs=1e-5), key
    for p, q in zip(fused.model.parameters(), plain.model.parameters(), strict=True):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)


def test_active_dropout_keeps_the_separate_forward():
    from areal_runtime.models.default_model import load_underconfident_model

    model, _ = load_underconfident_model()
    model.config.attention_dropout = 0.1
    config = GRPOConfig()
    config.actor.optimizer = OptimizerConfig()
    config.actor.disable_dropout = False
    assert not Learner(model, config, total_steps=1).dropout_free
