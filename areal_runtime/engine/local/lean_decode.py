# SPDX-License-Identifier: Apache-2.0
"""A decode step's forward for Qwen3-shaped models, without transformers' module calls.

On the embedded model a decode step is a handful of tiny matrix products; what it costs is
Python: transformers' forward goes through ~70 module calls, keyword plumbing, output records
and mask building for four layers (a step with a 64-token context took 4.0 ms, as much as
reading a 26k-token cache: BENCHMARKS.md, "Long-context decode"). ``LeanDecoder`` does the same
arithmetic in the same order, reading the model's own parameters at call time (so weight
updates are seen), and leaves prefill, training and every other model to transformers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F

from areal_runtime.engine.local.decode_attention import decode_sdpa


def _rms_norm(x: torch.Tensor, norm: Any) -> torch.Tensor:
    """Qwen3RMSNorm, step for step."""
    dtype = x.dtype
    x = x.to(torch.float32)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon)
    return norm.weight * x.to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LeanDecoder:
    """One decode step (one new token per row) of a plain Qwen3 causal LM."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.config = model.config
        self.inner = model.model
        self.scaling = float(self.inner.rotary_emb.attention_scaling)

    @classmethod
    def for_model(cls, model: Any) -> LeanDecoder | None:
        """A decoder for ``model`` if it is a Qwen3 causal LM this forward reproduces exactly
        (full attention everywhere, default RoPE, no biases, SiLU, fp32 or bf16 on CPU)."""
        config = getattr(model, "config", None)
        if type(model).__name__ != "Qwen3ForCausalLM" or config is None:
            return None
        rope = getattr(config, "rope_parameters", None) or {}
        plain = (
            set(getattr(config, "layer_types", None) or ["full_attention"]) == {"full_attention"}
            and rope.get("rope_type", "default") == "default"
            and not getattr(config, "attention_bias", False)
            and getattr(config, "hidden_act", None) == "silu"
            and next(model.parameters()).device.type == "cpu"
        )
        return cls(model) if plain else None

    @torch.inference_mode()
    def __call__(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any
    ) -> torch.Tensor:
        """Logits ``[B, vocab]`` (float) of the next token for ``ids`` ``[B, 1]`` at
        ``positions`` ``[B, 1]``; ``mask`` ``[B, T]`` is the attention mask after this token
        (1 = a real token); ``cache`` gets this token's keys and values."""
        inner, config = self.inner, self.config
        hidden = inner.embed_tokens.weight[ids]  # [B, 1, H]
        freqs = positions[..., None].float() * inner.rotary_emb.inv_freq.float()
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = (emb.cos() * self.scaling).to(hidden.dtype).unsqueeze(1)
        sin = (emb.sin() * self.scaling).to(hidden.dtype).unsqueeze(1)
        # one float mask for the four layers: SDPA turns a bool one into this in every call
        attn_mask = None
        if not bool(mask.all()):
            attn_mask = torch.zeros(mask.shape, dtype=hidden.dtype)
            attn_mask = attn_mask.masked_fill_(mask == 0, -torch.inf)[:, None, None, :]
        batch = ids.shape[0]
        for index, layer in enumerate(inner.layers[: config.num_hidden_layers]):
            attn = layer.self_attn
            residual = hidden
            x = _rms_norm(hidden, layer.input_layernorm)
            shape = (batch, 1, -1, attn.head_dim)
            query = _rms_norm(F.linear(x, attn.q_proj.weight).view(shape), attn.q_norm)
            key = _rms_norm(F.linear(x, attn.k_proj.weight).view(shape), attn.k_norm)
            value = F.linear(x, attn.v_proj.weight).view(shape).transpose(1, 2)
            query, key = query.transpose(1, 2), key.transpose(1, 2)
            query = query * cos + _rotate_half(query) * sin
            key = key * cos + _rotate_half(key) * sin
            key, value = cache.update(key, value, index)
            out, _ = decode_sdpa(attn, query, key, value, attn_mask, scaling=attn.scaling)
            hidden = residual + F.linear(out.reshape(batch, 1, -1), attn.o_proj.weight)
            residual = hidden
            x = _rms_norm(hidden, layer.post_attention_layernorm)
            mlp = layer.mlp
            gated = F.silu(F.linear(x, mlp.gate_proj.weight)) * F.linear(x, mlp.up_proj.weight)
            hidden = residual + F.linear(gated, mlp.down_proj.weight)
        hidden = _rms_norm(hidden, inner.norm)
        return F.linear(hidden[:, -1, :], self.model.lm_head.weight).float()
