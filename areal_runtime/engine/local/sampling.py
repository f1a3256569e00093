# SPDX-License-Identifier: Apache-2.0
"""Per-row sampling for a batch of logits: greedy, temperature, top-k, top-p.

Inverse-CDF sampling (``cumsum`` + ``searchsorted``) instead of ``torch.multinomial``, which the
was measured 10x slower at a 151k vocabulary (Qwen3's) on CPU. Logprobs are taken after temperature by
default (SGLang's semantics) or from the raw logits (vLLM's default) with ``raw_logprobs``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingParams:
    greedy: bool
    temperature: float
    top_p: float
    top_k: int
    frequency_penalty: float = 0.0

    @property
    def is_greedy(self) -> bool:
        return self.greedy or self.temperature == 0.0


def sample(
    logits: torch.Tensor,
    params: list[SamplingParams],
    generator: torch.Generator,
    *,
    raw_logprobs: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids ``[B]`` and their logprobs ``[B]`` for ``logits`` ``[B, V]`` (float32)."""
    logits = logits.float()
    batch, vocab = logits.shape
    temps = torch.tensor([1.0 if p.is_greedy else p.temperature for p in params]).unsqueeze(1)
    scaled = logits / temps
    tokens = torch.empty(batch, dtype=torch.long)
    greedy_rows = [i for i, p in enumerate(params) if p.is_greedy]
    sampled_rows = [i for i, p in enumerate(params) if not p.is_greedy]
    if greedy_rows:
        tokens[greedy_rows] = logits[greedy_rows].argmax(dim=-1)
    if sampled_rows:
        rows = scaled[sampled_rows]
        rows = _truncate(rows, [params[i] for i in sampled_rows], vocab)
        probs = torch.softmax(rows, dim=-1)
        cdf = probs.cumsum(dim=-1)
        u = torch.rand(len(sampled_rows), 1, generator=generator) * cdf[:, -1:]
        picked = torch.searchsorted(cdf, u).clamp_(max=vocab - 1).squeeze(1)
        tokens[sampled_rows] = picked
    source = logits if raw_logprobs else scaled
    logprobs = torch.log_softmax(source, dim=-1).gather(1, tokens.unsqueeze(1)).squeeze(1)
    return tokens, logprobs


def _truncate(rows: torch.Tensor, params: list[SamplingParams], vocab: int) -> torch.Tensor:
    """Mask logits outside each row's top-k and top-p set with -inf."""
    needs = [p.top_k < vocab or p.top_p < 1.0 for p in params]
    if not any(needs):
        return rows
    rows = rows.clone()
    for i, p in enumerate(params):
        if not needs[i]:
            continue
        row = rows[i]
        sorted_logits, order = row.sort(descending=True)
        keep = torch.ones(vocab, dtype=torch.bool)
        if 0 < p.top_k < vocab:
            keep[p.top_k :] = False
        if p.top_p < 1.0:
            probs = torch.softmax(sorted_logits, dim=-1)
            before = probs.cumsum(dim=-1) - probs
            keep &= before < p.top_p
        keep[0] = True
        removed = order[~keep]
        row[removed] = float("-inf")
    return rows
