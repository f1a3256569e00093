# SPDX-License-Identifier: Apache-2.0
"""AReaL's pre-update statistics, recorded through ``stats_tracker`` with their denominators."""

import pytest
import torch

from areal_runtime.trainer.stats import sequence_stats
from areal_runtime.utils import stats_tracker


def batch():
    # Row 0: 2 prompt + 3 trained tokens, correct; row 1: 2 prompt + 1 trained + 2 padding.
    attn = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    mask = torch.tensor([[0, 0, 1, 1, 1], [0, 0, 1, 0, 0]], dtype=torch.bool)
    adv = torch.tensor([[0.0, 0.0, 1.0, 2.0, 3.0], [0.0, 0.0, -4.0, 0.0, 0.0]])
    return torch.tensor([1.0, 0.0]), attn, mask, adv


def test_values_are_averaged_over_their_denominators():
    rewards, attn, mask, adv = batch()
    score = torch.tensor([0.5, -0.5])
    out = sequence_stats(rewards, attn, mask, adv, torch.zeros(2, 5), score)
    assert out["ppo_actor/n_seqs"] == 2 and out["ppo_actor/n_tokens"] == 8
    assert out["ppo_actor/n_valid_tokens"] == 4
    assert (out["ppo_actor/correct_n_seqs"], out["ppo_actor/incorrect_n_seqs"]) == (1, 1)
    assert out["ppo_actor/advantages/avg"] == pytest.approx((1 + 2 + 3 - 4) / 4)
    assert (out["ppo_actor/advantages/min"], out["ppo_actor/advantages/max"]) == (-4, 3)
    assert out["ppo_actor/correct_seq_len/avg"] == 5 and out["ppo_actor/incorrect_seq_len/avg"] == 3
    assert out["ppo_actor/prompt_len/avg"] == 2 and out["ppo_actor/seq_len/avg"] == 4
    assert out["ppo_actor/no_eos_ratios/avg"] == 0.5  # row 0 fills the whole length
    # The score lands on each row's last trained token: the final reward's mean over 4 tokens.
    assert out["ppo_actor/final_reward/avg"] == pytest.approx((0.5 - 0.5) / 4)
    assert out["ppo_actor/final_reward/max"] == 0.5


def test_a_denominator_with_no_members_logs_no_average_and_leaves_the_shared_tracker_alone():
    _, attn, mask, adv = batch()
    stats_tracker.reset_all()
    stats_tracker.scalar(kept=1.0)
    out = sequence_stats(torch.zeros(2), attn, mask, adv, torch.zeros(2, 5), torch.zeros(2))
    assert out["ppo_actor/correct_n_seqs"] == 0
    assert not any(k.startswith("ppo_actor/correct_seq_len") for k in out)
    assert out["ppo_actor/incorrect_seq_len/avg"] == 4
    assert stats_tracker.export(reset=True) == {"kept": 1.0, "kept__count": 1}
