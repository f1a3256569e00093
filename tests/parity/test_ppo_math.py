# SPDX-License-Identifier: Apache-2.0
"""The PPO/GRPO math, number for number: areal_runtime's trainer functions against AReaL's.

Random batches (CPU, seconds). AReaL computes advantages in the prediction frame (position t
predicts token t+1, tensors rolled by one); areal_runtime in the token frame, so its advantage
at token t+1 is AReaL's at position t. The loss is elementwise, so both take the same tensors.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

import areal
import pytest
import torch
from areal.api import cli_args as areal_args
from areal.utils.functional import ppo_actor_loss_fn

from areal_runtime.api import experiment_config as rt_args
from areal_runtime.trainer.ppo import actor as rt_actor
from areal_runtime.utils.functional import ppo_actor_loss_fn as rt_ppo_actor_loss_fn

N, L, GROUP = 8, 14, 4


def _areal_ppo_actor() -> type:
    """AReaL's PPOActor; ``areal.trainer``'s ``__init__`` imports its other trainers, which need
    packages .venv-areal leaves out (``datasets``, ``swanlab``...), so when one of those is
    missing the package is entered without its ``__init__`` (a missing ``areal`` module still
    fails)."""
    try:
        return importlib.import_module("areal.trainer.ppo.actor").PPOActor
    except ModuleNotFoundError as exc:
        if (exc.name or "areal").split(".")[0] == "areal":
            raise
    package = types.ModuleType("areal.trainer")
    package.__path__ = [str(Path(areal.__file__).parent / "trainer")]
    sys.modules["areal.trainer"] = package
    try:
        return importlib.import_module("areal.trainer.ppo.actor").PPOActor
    finally:
        del sys.modules["areal.trainer"]


PPOActor = _areal_ppo_actor()


def batch(seed: int) -> dict[str, torch.Tensor]:
    """Prompt then completion per row, right-padded; the last real token is trained."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(6, L + 1, (N,), generator=g)
    lengths[0] = L  # one row fills the width (no padding, AReaL's "no eos" case)
    prompts = torch.randint(2, 5, (N,), generator=g)
    positions = torch.arange(L).expand(N, L)
    attention = positions < lengths.unsqueeze(1)
    loss_mask = attention & (positions >= prompts.unsqueeze(1))
    return {
        "input_ids": torch.randint(3, 50, (N, L), generator=g) * attention,
        "attention_mask": attention.long(),
        "loss_mask": loss_mask.long(),
        "logprobs": -torch.rand(N, L, generator=g) * 3 * loss_mask,
        "ref_logp_tokens": -torch.rand(N, L, generator=g) * 3 * loss_mask,
        "rewards": torch.randn(N, generator=g),
    }


def configs(**actor: Any) -> tuple[Any, Any]:
    """The same actor settings as AReaL's PPOActorConfig and as areal_runtime's."""

    def build(args: Any) -> Any:
        kw = dict(actor)
        for name in ("reward_norm", "adv_norm"):
            if kw.get(name) is not None:
                kw[name] = args.NormConfig(**kw[name])
        if kw.get("rejection_sampling") is not None:
            kw["rejection_sampling"] = args.RejectionSamplingConfig(**kw["rejection_sampling"])
        return args.PPOActorConfig(**kw)

    return build(areal_args), build(rt_args)


GRPO_NORM = {"mean_level": "group", "std_level": "group", "group_size": GROUP}
ADVANTAGE_CASES = {
    "grpo": {"reward_norm": GRPO_NORM, "adv_norm": None},
    "batch_adv_norm": {"reward_norm": None, "adv_norm": {"mean_level": "batch"}},
    "leave_one_out": {
        "reward_norm": {**GRPO_NORM, "mean_leave1out": True, "std_level": None},
        "adv_norm": None,
    },
    "scaled_clipped": {
        "reward_bias": -0.2,
        "reward_scaling": 3.0,
        "reward_clip": 2.0,
        "reward_norm": None,
        "adv_norm": None,
    },
    "discounted": {"discount": 0.9, "gae_lambda": 0.8, "reward_norm": None, "adv_norm": None},
    "kl_k1": {"kl_ctl": 0.1, "kl_estimator": "k1", "reward_norm": GRPO_NORM, "adv_norm": None},
    "kl_k2": {"kl_ctl": 0.2, "kl_estimator": "k2", "reward_norm": None, "adv_norm": None},
    "kl_k3": {"kl_ctl": 0.05, "kl_estimator": "k3", "reward_norm": None, "adv_norm": None},
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", list(ADVANTAGE_CASES))
def test_advantages_match_areals_compute_advantages(case: str, seed: int) -> None:
    areal_cfg, rt_cfg = configs(use_decoupled_loss=True, **ADVANTAGE_CASES[case])
    data = batch(seed)
    groups = torch.arange(N) // GROUP

    areal_data = {
        "input_ids": data["input_ids"].clone(),
        "attention_mask": data["attention_mask"].clone(),
        "loss_mask": data["loss_mask"].clone(),
        "logprobs": data["logprobs"].clone(),
        "rewards": data["rewards"].clone(),
        # AReaL's reference logprobs come from compute_logp: already in the prediction frame.
        "ref_logp": torch.roll(data["ref_logp_tokens"], -1, dims=-1),
    }
    out = PPOActor(areal_cfg, engine=None)._compute_advantages(areal_data)

    score = rt_actor.shaped_rewards(data["rewards"], rt_cfg, groups)
    adv, kl = rt_actor.advantages(
        score,
        data["loss_mask"],
        rt_cfg,
        groups,
        old_logp=data["logprobs"],
        ref_logp=data["ref_logp_tokens"] if rt_cfg.kl_ctl else None,
    )
    mask = data["loss_mask"].bool()
    theirs = torch.roll(out["advantages"], 1, dims=-1)  # back to the token frame
    torch.testing.assert_close(adv[mask], theirs[mask].float(), rtol=1e-5, atol=1e-5)
    if rt_cfg.kl_ctl:
        torch.testing.assert_close(
            kl[mask], torch.roll(out["kl_rewards"], 1, dims=-1)[mask].float()
        )


def loss_inputs(seed: int, stale: float, drift: float = 0.3) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(100 + seed)
    mask = torch.rand(N, L, generator=g) < 0.8
    mask[:, 0] = True  # no empty row
    behave = -torch.rand(N, L, generator=g) * 3
    prox = behave + torch.randn(N, L, generator=g) * stale  # policy drift since sampling
    return {
        "logp": prox + torch.randn(N, L, generator=g) * drift,
        "prox": prox,
        "behave": behave,
        "adv": torch.randn(N, L, generator=g),
        "mask": mask,
    }


LOSS_CASES = {
    "ppo": {"eps_clip": 0.2},
    "clip_higher": {"eps_clip": 0.2, "eps_clip_higher": 0.28},
    "dual_clip": {"eps_clip": 0.2, "c_clip": 3.0},
    "decoupled_mask": {
        "eps_clip": 0.2,
        "use_decoupled_loss": True,
        "rejection_sampling": {"level": "token", "action": "mask", "upper": 1.5},
    },
    "decoupled_clamp": {
        "eps_clip": 0.2,
        "use_decoupled_loss": True,
        "rejection_sampling": {"level": "token", "action": "clamp", "upper": 1.5},
    },
    "decoupled_sequence_mask": {
        "eps_clip": 0.2,
        "use_decoupled_loss": True,
        "rejection_sampling": {"level": "sequence", "action": "mask", "upper": 1.2},
    },
    "gspo": {"eps_clip": 0.2, "importance_sampling_level": "sequence"},
    "gspo_clipped": {"eps_clip": 0.05, "importance_sampling_level": "sequence"},
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_ppo_loss_matches_areals_ppo_actor_loss_fn(case: str, seed: int) -> None:
    settings = LOSS_CASES[case]
    areal_cfg, rt_cfg = configs(**settings)
    x = loss_inputs(
        seed,
        stale=0.5 if "rejection_sampling" in settings else 0.05,
        drift=1.0 if case == "gspo_clipped" else 0.3,
    )
    logp = x["logp"].clone().requires_grad_(True)
    their_logp = x["logp"].clone().requires_grad_(True)

    # The trainer's loss is areal_runtime's ppo_actor_loss_fn (grpo_loss_fn calls it).
    ours, stats = rt_ppo_actor_loss_fn(
        logprobs=logp,
        proximal_logprobs=x["prox"],
        old_logprobs=x["behave"],
        advantages=x["adv"],
        eps_clip=rt_cfg.eps_clip,
        loss_mask=x["mask"],
        eps_clip_higher=rt_cfg.eps_clip_higher,
        c_clip=rt_cfg.c_clip,
        rejection_sampling=rt_cfg.rejection_sampling if rt_cfg.use_decoupled_loss else None,
        importance_sampling_level=rt_cfg.importance_sampling_level,
    )
    theirs, their_stats = ppo_actor_loss_fn(
        logprobs=their_logp,
        proximal_logprobs=x["prox"],
        old_logprobs=x["behave"],
        advantages=x["adv"],
        eps_clip=areal_cfg.eps_clip,
        loss_mask=x["mask"],
        eps_clip_higher=areal_cfg.eps_clip_higher,
        c_clip=areal_cfg.c_clip,
        rejection_sampling=areal_cfg.rejection_sampling if areal_cfg.use_decoupled_loss else None,
        importance_sampling_level=areal_cfg.importance_sampling_level,
    )
    torch.testing.assert_close(ours, theirs.float(), rtol=1e-5, atol=1e-6)
    ours.backward()
    theirs.backward()
    torch.testing.assert_close(logp.grad, their_logp.grad, rtol=1e-5, atol=1e-6)
    if "filtered_fraction" in their_stats:
        assert stats["filtered_fraction"] == pytest.approx(float(their_stats["filtered_fraction"]))


def test_the_cases_exercise_what_they_name() -> None:
    """Rejection sampling filters or clamps some tokens, and the clip bites somewhere."""
    x = loss_inputs(0, stale=0.5)
    weight = torch.exp(x["prox"] - x["behave"])[x["mask"]]
    assert (weight > 1.5).any() and (weight <= 1.5).any()
    y = loss_inputs(0, stale=0.05)
    ratio = torch.exp(y["logp"] - y["prox"])[y["mask"]]
    assert ((ratio > 1.2) | (ratio < 0.8)).any()
    z = loss_inputs(0, stale=0.05, drift=1.0)
    m = z["mask"].float()
    seq_ratio = torch.exp(((z["logp"] - z["prox"]) * m).sum(1) / m.sum(1))
    assert ((seq_ratio > 1.05) | (seq_ratio < 0.95)).any()  # the sequence-level clip bites
