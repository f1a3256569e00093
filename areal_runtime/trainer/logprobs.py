# SPDX-License-Identifier: Apache-2.0
"""The actor's forward pass: each trained token's logprob under the model being trained.

Only what the loss reads is computed. The LM head runs at the trained positions alone; a row
whose tokens are the start of another row's (an agent's turn-1 row inside its turn-2 row, or two
samples of a group that sampled the same tokens) is read from that row's forward instead of
being run again; and the start all rows share (a system prompt with tool schemas) runs once. A
causal model gives a prefix the same logits either way, so the logprobs and the gradient are
those of a forward of every row (a shared part's gradient is the sum over the rows using it).
"""

from __future__ import annotations

from typing import Any

import torch

from areal_runtime.models.hf_forward import cache_keyword

# Below this many shared tokens, a separate forward of the start costs more than it saves.
MIN_SHARED_PREFIX = 32


def trained_logprobs(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    temperature: float,
    where: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``token_logprobs`` at the positions ``where`` (``[N, L]`` bool, token frame), 0 elsewhere,
    running the forward once per distinct longest row."""
    hosts = prefix_hosts(input_ids, attention_mask)
    where = where.bool() & attention_mask.bool()
    if hosts is None or len(set(hosts)) == len(hosts):
        return token_logprobs(model, input_ids, attention_mask, temperature, where)
    unique = sorted(set(hosts))
    slot = {row: i for i, row in enumerate(unique)}
    index = torch.tensor([slot[h] for h in hosts])
    host_where = torch.zeros(len(unique), where.shape[1], dtype=torch.long)
    host_where = host_where.index_add_(0, index, where.long()) > 0
    logp, entropy = token_logprobs(
        model, input_ids[unique], attention_mask[unique], temperature, host_where
    )
    zero = torch.zeros((), dtype=logp.dtype)
    return torch.where(where, logp[index], zero), torch.where(where, entropy[index], zero)


def prefix_hosts(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> list[int] | None:
    """For each row, the longest row (lowest index among equals) whose tokens start with all of
    its tokens, itself if none; ``None`` unless every row is right-padded (a prefix then sits at
    the same positions in its host)."""
    lengths = attention_mask.bool().sum(1).tolist()
    width = attention_mask.shape[1]
    ramp = torch.arange(width).unsqueeze(0)
    if not torch.equal(attention_mask.bool(), ramp < torch.tensor(lengths).unsqueeze(1)):
        return None
    order = sorted(range(len(lengths)), key=lambda r: (-lengths[r], r))
    hosts = []
    for row in range(len(lengths)):
        n = lengths[row]
        hosts.append(
            next(
                h
                for h in order
                if lengths[h] >= n and torch.equal(input_ids[h, :n], input_ids[row, :n])
            )
        )
    return hosts


def token_logprobs(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    temperature: float,
    where: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(logprobs, entropy)``, both ``[N, L]`` in the token frame (position 0 is 0).

    Logits are divided by the sampling temperature, matching the engine's logprobs (SGLang's
    convention, which AReaL's actor follows with ``actor.temperature``). With ``where`` (``[N, L]``
    bool, token frame) only those positions get logits, the others are 0: with a large
    vocabulary the LM head is much of the cost, and an agent's rows are mostly prompt.
    """
    head = _output_head(model) if where is not None else None
    if head is None:
        out = model(input_ids=input_ids.long(), attention_mask=attention_mask.long())
        return _picked(out.logits[:, :-1], input_ids[:, 1:], temperature)
    decoder, lm_head = head
    share = dropout_free(model) and _full_attention(model)
    hidden = _hidden_states(decoder, input_ids.long(), attention_mask.long(), share)
    target = where[:, 1:].bool()
    logits = lm_head(hidden[:, :-1][target])
    picked, entropy = _picked(logits, input_ids[:, 1:][target], temperature)
    # Scatter back into the token frame; masked_scatter keeps the gradient to ``picked``.
    frame = picked.new_zeros(target.shape[0], target.shape[1] + 1)
    token_frame = torch.cat([torch.zeros_like(target[:, :1]), target], dim=1)
    return frame.masked_scatter(token_frame, picked), frame.masked_scatter(token_frame, entropy)


def _hidden_states(
    decoder: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, share: bool
) -> torch.Tensor:
    """The decoder's last hidden states ``[N, L, H]``. The start every row shares (an agent's
    system prompt and tool schemas) runs once and the rows continue from its key/value cache;
    the gradient flows back through the cache. Not with active dropout, which would then drop
    the same units in every row."""
    same = (input_ids == input_ids[:1]) & attention_mask.bool() & attention_mask[:1].bool()
    shared = min(int(same.long().cumprod(1).sum(1).min()), input_ids.shape[1] - 1)
    if not share or input_ids.shape[0] < 2 or shared < MIN_SHARED_PREFIX:
        return decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    start = decoder(input_ids=input_ids[:1, :shared], use_cache=True)
    # transformers 5.24 renamed ``past_key_values`` to ``cache``; both are accepted here.
    cache = getattr(start, "cache", None)
    cache = start.past_key_values if cache is None else cache
    cache.batch_repeat_interleave(input_ids.shape[0])
    rest = decoder(
        input_ids=input_ids[:, shared:],
        attention_mask=attention_mask,
        use_cache=True,
        **{cache_keyword(decoder): cache},
    )
    prefix = start.last_hidden_state.expand(input_ids.shape[0], -1, -1)
    return torch.cat([prefix, rest.last_hidden_state], dim=1)


def dropout_free(model: Any) -> bool:
    """Whether train and eval mode compute the same logprobs (no active dropout anywhere)."""
    if any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules()):
        return False
    cfg = getattr(model, "config", None)
    names = ("attention_dropout", "hidden_dropout", "dropout", "resid_pdrop", "attn_pdrop")
    return not any(isinstance(getattr(cfg, n, 0), float) and getattr(cfg, n) > 0 for n in names)


def _full_attention(model: Any) -> bool:
    """Whether every layer attends to the whole sequence, so a key/value cache continues it
    exactly (not sliding-window or linear-attention layers, whose caches keep less)."""
    layer_types = getattr(getattr(model, "config", None), "layer_types", None)
    return not layer_types or all(kind == "full_attention" for kind in layer_types)


def _output_head(model: Any) -> tuple[Any, Any] | None:
    """``(decoder, lm_head)`` where the logits are a plain linear map of the decoder's last hidden
    state (Qwen, Llama, Mistral); ``None`` where a model scales or caps its logits."""
    try:
        decoder, lm_head = model.get_decoder(), model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None
    config = getattr(model, "config", None)
    adjusted = any(
        getattr(config, name, None) not in (None, 1.0)
        for name in ("final_logit_softcapping", "logit_scale", "logits_scaling")
    )
    if decoder is None or decoder is model or not isinstance(lm_head, torch.nn.Linear) or adjusted:
        return None
    return decoder, lm_head


def _picked(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each target's logprob and the distribution's entropy (no gradient) at each position; in
    the token frame (a leading 0) when the logits are ``[N, L - 1, V]``."""
    logits = logits.float()
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    picked = logp_all.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        entropy = -(logp_all.exp() * logp_all).sum(-1)
    if picked.dim() == 1:
        return picked, entropy
    zeros = picked.new_zeros(picked.shape[0], 1)
    return torch.cat([zeros, picked], dim=1), torch.cat([zeros, entropy], dim=1)
