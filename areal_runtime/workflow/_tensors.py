# SPDX-License-Identifier: Apache-2.0
"""The one-sequence trajectory the reference workflows return (batch dimension 1)."""

from __future__ import annotations

from typing import Any


def single_sequence(resp: Any, reward: float) -> dict[str, Any]:
    """Prompt then completion: loss on the completion only, prompt logprobs 0, versions -1."""
    import torch

    seq = resp.input_tokens + resp.output_tokens
    columns = {
        "input_ids": torch.tensor(seq, dtype=torch.int32),
        "loss_mask": torch.tensor([0] * resp.input_len + [1] * resp.output_len, dtype=torch.int32),
        "logprobs": torch.tensor(
            [0.0] * resp.input_len + resp.output_logprobs, dtype=torch.float32
        ),
        "versions": torch.tensor([-1] * resp.input_len + resp.output_versions, dtype=torch.int32),
        "attention_mask": torch.ones(len(seq), dtype=torch.bool),
        "rewards": torch.tensor(reward, dtype=torch.float32),
    }
    return {key: value.unsqueeze(0) for key, value in columns.items()}
