# SPDX-License-Identifier: Apache-2.0
"""Attention for the local engine: transformers' SDPA, with a faster path for decode steps.

A decode step has one query per row, so its attention is a read of the KV cache and little
else. transformers hands a grouped-query model's single query to ``scaled_dot_product_attention``
with ``enable_gqa`` when there is no mask (one row, or rows of equal length); on CPU that kernel
took 1.5-2.5x longer than the same attention with the query heads of each KV head packed into
one (BENCHMARKS.md, "Long-context decode"). ``decode_sdpa`` packs them for every single-query
step, mask or not, and leaves every other call (prefill, training, sliding windows, biases) to
transformers' own function, so only decode steps change, and only by float rounding.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

NAME = "areal_decode_sdpa"


def decode_sdpa(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """SDPA with GQA query packing for single-query steps (shapes as transformers passes them:
    query ``[B, Hq, q, D]``, key/value ``[B, Hkv, T, D]``, mask ``[B, 1, q, T]`` bool or None)."""
    batch, heads, q_len, dim = query.shape
    kv_heads = key.shape[1]
    plain = (
        q_len == 1
        and not module.training
        and heads % kv_heads == 0
        and kwargs.get("position_bias") is None
        and kwargs.get("softcap") is None
        and kwargs.get("s_aux") is None
        and (
            attention_mask is None
            or (attention_mask.dtype == torch.bool and attention_mask.shape[1] == 1)
        )
    )
    if not plain:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    packed = query.reshape(batch, kv_heads, heads // kv_heads, dim)
    out = F.scaled_dot_product_attention(
        packed, key, value, attn_mask=attention_mask, scale=scaling
    )
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


def use_decode_sdpa(model: Any) -> bool:
    """Switch ``model`` from transformers' ``sdpa`` to ``decode_sdpa``; True if it was switched.

    Models on another implementation (eager, flash, flex) or that cannot switch keep theirs.
    """
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return False
    AttentionInterface.register(NAME, decode_sdpa)
    ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, AttributeError, NotImplementedError):
        return False
    return getattr(model.config, "_attn_implementation", None) == NAME
