# SPDX-License-Identifier: Apache-2.0
"""``actor.prox_logp_method`` reaches the loss: 'loglinear' is not a silent 'recompute'.

The trainer used to ignore the setting, so a run asking for AReaL's log-linear proximal
approximation trained with recomputed proximal logprobs (and paid for the extra forward).
"""

import copy

import pytest
import torch

from areal_runtime.api.cli_args import GRPOConfig, NormConfig, OptimizerConfig, PPOActorConfig
from areal_runtime.trainer.learner import Learner
from areal_runtime.trainer.ppo import actor as actor_module

SIZE, LENGTH, PROMPT = 4, 14, 8


def batch() -> list[dict]:
    """Two groups sampled at version 0, trained at version 2: the proximal policy (version 1)
    lies halfway between the behaviour and current policies (alpha = 0.5)."""
    gen = torch.Generator().manual_seed(0)
    out = []
    for g in range(2):
        mask = torch.zeros(SIZE, LENGTH, dtype=torch.int32)
        mask[:, PROMPT:] = 1
        out.append(
            {
                "input_ids": torch.randint(3, 400, (SIZE, LENGTH), generator=gen),
                "loss_mask": mask,
                "attention_mask": torch.ones(SIZE, LENGTH, dtype=torch.bool),
                "logprobs": -torch.rand(SIZE, LENGTH, generator=gen) * mask - 2.0 * mask,
                "versions": torch.where(mask.bool(), 0, -1),
                "rewards": torch.tensor([float((g + i) % 2) for i in range(SIZE)]),
            }
        )
    return out


def learner(model, method: str) -> Learner:
    config = GRPOConfig(seed=1)
    config.actor.optimizer = OptimizerConfig(lr=1e-3)
    config.actor.ppo_n_minibatches = 2
    config.actor.use_decoupled_loss = True
    config.actor.prox_logp_method = method
    config.actor.reward_norm = NormConfig(mean_level="group", std_level="group", group_size=SIZE)
    return Learner(copy.deepcopy(model), config, total_steps=4)


def test_loglinear_trains_on_the_approximation_not_on_recomputed_logprobs(monkeypatch):
    from areal_runtime.models.default_model import load_underconfident_model

    torch.set_num_threads(1)
    model, _ = load_underconfident_model()
    resolved: dict[str, list[tuple[torch.Tensor, ...]]] = {"recompute": [], "loglinear": []}
    rows: dict[str, int] = {"recompute": 0, "loglinear": 0}
    original = actor_module._resolve_proximal_logp
    current = {"method": ""}

    def spy(**kwargs):
        prox = original(**kwargs)
        resolved[current["method"]].append((kwargs["old_logp"], kwargs["logprobs"], prox))
        return prox

    monkeypatch.setattr(actor_module, "_resolve_proximal_logp", spy)
    results = {}
    for method in ("recompute", "loglinear"):
        current["method"] = method
        trainer = learner(model, method)

        def count(module, args, kwargs, method=method):
            rows[method] += kwargs["input_ids"].shape[0]

        trainer.model.get_decoder().register_forward_pre_hook(count, with_kwargs=True)
        results[method] = trainer.step(batch(), version=2)

    # 8 rows in 2 minibatches. recompute: an extra forward for the second minibatch's proximal
    # logprobs (the first minibatch's own forward serves for it); loglinear: training only.
    assert rows == {"recompute": 8 + 4, "loglinear": 8}
    mask = torch.zeros(SIZE, LENGTH, dtype=torch.bool)
    mask[:, PROMPT:] = True
    for (_, _, prox_rc), (old, logp, prox_ll) in zip(
        resolved["recompute"], resolved["loglinear"], strict=True
    ):
        # Sampled at 0, trained at 2: log pi_prox = log pi_behave + 0.5 (log pi_theta - ...).
        torch.testing.assert_close(prox_ll[mask], (old + 0.5 * (logp - old))[mask])
        assert not torch.allclose(prox_rc[mask], prox_ll[mask], atol=1e-3)
    # recompute: the first minibatch's proximal logprobs are the weights before any update,
    # i.e. its own current logprobs.
    _, logp, prox = resolved["recompute"][0]
    torch.testing.assert_close(prox[mask], logp[mask])
    recompute, loglinear = results["recompute"], results["loglinear"]
    assert abs(loglinear["importance_ratio_mean"] - recompute["importance_ratio_mean"]) > 1e-3
    assert abs(loglinear["loss"] - recompute["loss"]) > 1e-4
    assert "ppo_actor/update/compute_logp/loglinear/approx_logp/avg" in loglinear
    assert "ppo_actor/update/compute_logp/loglinear/approx_logp/avg" not in recompute
    assert "ppo_actor/update/compute_logp/prox_logp_gt/avg" in recompute


def test_loglinear_without_versions_says_what_is_missing():
    from areal_runtime.models.default_model import load_underconfident_model

    model, _ = load_underconfident_model()
    groups = batch()
    for g in groups:
        del g["versions"]
    with pytest.raises(ValueError, match="loglinear' but versions not available"):
        learner(model, "loglinear").step(groups, version=2)


def test_an_unknown_method_is_refused_when_the_config_is_built():
    with pytest.raises(ValueError, match="prox_logp_method must be one of"):
        PPOActorConfig(prox_logp_method="approximate")
