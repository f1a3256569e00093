# SPDX-License-Identifier: Apache-2.0
"""Helpers for the PPO statistics (AReaL's ``areal.trainer.ppo.stats``)."""

from __future__ import annotations

from typing import Any

import torch


def infer_token_denominator(input_data: dict[str, Any], fallback: torch.Tensor) -> torch.Tensor:
    """An all-True mask over every token of the micro-batch, for the ``n_tokens`` count.

    Prefers the batch's own layout (``attention_mask``, then packed ``cu_seqlens``) over the
    loss tensors, which context parallelism may have sliced; ``input_ids`` is used only when
    it has ``fallback``'s shape (tree-packed batches pad it to the tree's size).
    """
    kwargs: dict[str, Any] = {"dtype": torch.bool, "device": fallback.device}
    attention_mask = input_data.get("attention_mask")
    if isinstance(attention_mask, torch.Tensor):
        return torch.ones_like(attention_mask, **kwargs)
    cu_seqlens = input_data.get("cu_seqlens")
    if isinstance(cu_seqlens, torch.Tensor) and cu_seqlens.numel() > 0:
        return torch.ones(int(cu_seqlens[-1]), **kwargs)
    input_ids = input_data.get("input_ids")
    if isinstance(input_ids, torch.Tensor) and input_ids.shape == fallback.shape:
        return torch.ones_like(input_ids, **kwargs)
    return torch.ones_like(fallback, **kwargs)
