# SPDX-License-Identifier: Apache-2.0
"""Attention for the local engine: transformers' SDPA, with faster paths for decode steps and
for the chunks of a long prompt.

A decode step has one query per row, so its attention is a read of the KV cache and little
else. transformers hands a grouped-query model's single query to ``scaled_dot_product_attention``
with ``enable_gqa`` when there is no mask (one row, or rows of equal length); on CPU that kernel
took 1.5-2.5x longer than the same attention with the query heads of each KV head packed into
one (BENCHMARKS.md, "Long-context decode"). ``decode_sdpa`` packs them for every single-query
step, mask or not.

A chunk of a chunked prefill (one row, ``q`` new tokens after ``T - q`` cached ones) sees every
cached column and its own columns causally. transformers hands SDPA that as a ``[1, 1, q, T]``
bool mask, which costs CPU SDPA a float copy of the mask per layer and blocks it from
skipping work: at 16.5k positions the masked call took 126-157 ms a layer, one without a mask
78 ms (BENCHMARKS.md, "Long prompts in chunks"). ``chunk_sdpa`` runs the
cached part without a mask (query heads packed per KV head, as for decode) and the chunk's own
part with ``is_causal``, and merges the two by their log-sum-exp, which CPU's flash kernel
returns. Every other call (prefill from nothing, batches, training, sliding windows, biases)
goes to transformers' own function, so only these two cases change, and only by float rounding.
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
    query ``[B, Hq, q, D]``, key/value ``[B, Hkv, T, D]``, mask ``[B, 1, q, T]`` bool, additive
    float (what ``lean_decode`` builds once per step) or None)."""
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
            or (
                (attention_mask.dtype == torch.bool or attention_mask.is_floating_point())
                and attention_mask.shape[1] == 1
            )
        )
    )
    if not plain:
        if chunk_after_cache(module, query, key, attention_mask, kwargs):
            return chunk_sdpa(query, key, value, scaling), None
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    packed = query.reshape(batch, kv_heads, heads // kv_heads, dim)
    out = F.scaled_dot_product_attention(
        packed, key, value, attn_mask=attention_mask, scale=scaling
    )
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
_checked: tuple[torch.Tensor | None, bool] = (None, False)  # the last mask seen, and its verdict


def chunk_after_cache(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    mask: torch.Tensor | None,
    kwargs: dict[str, Any],
) -> bool:
    """True for one row of ``q > 1`` new tokens after cached ones whose mask allows every cached
    column and the new ones causally: exactly what ``chunk_sdpa`` computes."""
    global _checked
    batch, heads, q_len, _ = query.shape
    past = key.shape[2] - q_len
    if (
        _FLASH is None
        or query.device.type != "cpu"
        or module.training
        or batch != 1
        or q_len < 2
        or past < 1
        or heads % key.shape[1]
        or mask is None
        or mask.dtype != torch.bool
        or tuple(mask.shape) != (1, 1, q_len, key.shape[2])
        or any(kwargs.get(k) is not None for k in ("position_bias", "softcap", "s_aux"))
    ):
        return False
    if _checked[0] is not mask:  # the layers of one forward share one mask: check it once
        own = torch.ones(q_len, q_len, dtype=torch.bool).tril_()
        ok = bool(mask[..., :past].all()) and torch.equal(mask[0, 0, :, past:], own)
        _checked = (mask, ok)
    return _checked[1]


def _flash(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, causal: bool, scale: float | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """CPU's flash attention: the output and each query's log-sum-exp."""
    out, lse = _FLASH(query, key, value, 0.0, causal, scale=scale)[:2]
    return out, lse


def chunk_sdpa(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, scaling: float | None
) -> torch.Tensor:
    """Attention of ``q`` new tokens over ``T - q`` cached ones and themselves (causal), as two
    unmasked flash calls merged by log-sum-exp; returns ``[1, q, heads, D]`` as transformers'
    SDPA does."""
    batch, heads, q_len, dim = query.shape
    kv_heads = key.shape[1]
    group = heads // kv_heads
    past = key.shape[2] - q_len
    packed = query.reshape(batch, kv_heads, group * q_len, dim)
    old, old_lse = _flash(packed, key[:, :, :past], value[:, :, :past], False, scaling)
    old = old.reshape(batch, heads, q_len, dim)
    old_lse = old_lse.reshape(batch, heads, q_len)
    own_key = key[:, :, past:].repeat_interleave(group, 1)
    own_value = value[:, :, past:].repeat_interleave(group, 1)
    new, new_lse = _flash(query, own_key, own_value, True, scaling)
    top = torch.maximum(old_lse, new_lse)
    old_weight = (old_lse - top).exp_().unsqueeze(-1).to(old.dtype)
    new_weight = (new_lse - top).exp_().unsqueeze(-1).to(new.dtype)
    out = (old * old_weight + new * new_weight) / (old_weight + new_weight)
    return out.transpose(1, 2).contiguous()


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
