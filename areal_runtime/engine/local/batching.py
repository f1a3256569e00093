# SPDX-License-Identifier: Apache-2.0
"""Continuous batching over a Hugging Face causal LM with a left-padded KV cache.

One worker thread owns the model. Between decode steps it admits waiting requests (prefilled
together, then merged into the running batch by left-padding the shorter cache) and drops rows
that finished or were cancelled. Positions come from the attention mask, so left padding does
not change the numbers: greedy output matches ``model.generate`` token for token.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from transformers import DynamicCache

from areal_runtime.engine._contract import stop_reason
from areal_runtime.engine.local.decode_attention import use_decode_sdpa
from areal_runtime.engine.local.growing_cache import (
    GrowingLayer,
    compaction_order,
    growing_layers,
    make_growing,
)
from areal_runtime.engine.local.lean_decode import LeanDecoder
from areal_runtime.engine.local.sampling import SamplingParams, sample
from areal_runtime.models.hf_forward import cache_keyword

if TYPE_CHECKING:
    from areal_runtime.engine.local.prefix_cache import CacheHit


@dataclass
class Row:
    """One request being generated; written by the worker thread only."""

    prompt: list[int]
    budget: int
    params: SamplingParams
    stop_ids: set[int]
    stop_strings: list[str]
    min_new_tokens: int
    on_done: Callable[[Row, BaseException | None], None]
    submitted: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    stop_reason: str | None = None
    cancelled: bool = False
    cache_key: Hashable = None  # the prefix cache's extra key (the request's images)
    cached_tokens: int = 0  # prompt tokens whose KV came from the prefix cache
    cache_hit: CacheHit | None = None  # the prefix cache's hold, from prefill to the end


@dataclass
class ChunkedPrefill:
    """A long prompt being prefilled a chunk per worker turn, between decode steps."""

    row: Row
    cache: DynamicCache
    done: int  # prompt tokens whose KV is in ``cache``


class BatchState:
    """The running batch: rows, their KV cache and attention mask (``[B, T]``)."""

    def __init__(self, max_rows: int | None = None) -> None:
        self.max_rows = max_rows  # the engine's batch limit: no buffer keeps rows past it
        self.rows: list[Row] = []
        self.cache: DynamicCache | None = None
        self.mask: torch.Tensor | None = None

    def drop(self, keep: list[int]) -> None:
        """Keep the rows ``keep`` (ascending). With a plain cache, a freed slot takes one of
        the last rows instead (row order means nothing in a batch), in place."""
        if len(keep) == len(self.rows):
            return
        if not keep:
            self.rows, self.cache, self.mask = [], None, None
            return
        assert self.cache is not None and self.mask is not None
        layers = growing_layers(self.cache)
        if layers is None:
            self.rows = [self.rows[i] for i in keep]
            index = torch.tensor(keep)
            self.cache.batch_select_indices(index)
            self.mask = self.mask[index]
        else:
            order = compaction_order(len(self.rows), keep)
            for layer in layers:
                layer.keep_rows(order)
            self.rows = [self.rows[i] for i in order]
            self.mask = self.mask[torch.tensor(order)]
        self._trim_padding(layers)

    def _trim_padding(self, layers: list[GrowingLayer] | None) -> None:
        """Drop leading columns that are padding in every row (they only cost attention);
        ``layers``: the cache's growing layers, None if it has others."""
        assert self.mask is not None and self.cache is not None
        used = self.mask.any(dim=0).nonzero()
        start = int(used[0]) if len(used) else 0
        if start == 0:
            return
        self.mask = self.mask[:, start:]
        if layers is not None:
            for layer in layers:
                layer.trim(start)
            return
        self.cache = DynamicCache(
            ddp_cache_data=[
                (layer.keys[:, :, start:], layer.values[:, :, start:])
                for layer in self.cache.layers
            ]
        )

    def merge(self, rows: list[Row], cache: DynamicCache, mask: torch.Tensor) -> None:
        """Append newly prefilled rows, left-padding whichever cache is shorter (with a plain
        cache, the new rows are written into the batch's buffer: nothing else is copied)."""
        if not self.rows:
            self.rows, self.cache, self.mask = list(rows), cache, mask
            return
        assert self.cache is not None and self.mask is not None
        length = max(self.mask.shape[1], mask.shape[1])
        layers = growing_layers(self.cache)
        if layers is not None:
            for layer, new in zip(layers, cache.layers, strict=True):
                layer.append_rows(new.keys, new.values, self.max_rows)
        else:
            merged = []
            for old, new in zip(self.cache.layers, cache.layers, strict=True):
                keys = torch.cat([_left_pad(old.keys, length), _left_pad(new.keys, length)])
                values = torch.cat([_left_pad(old.values, length), _left_pad(new.values, length)])
                merged.append((keys, values))
            self.cache = DynamicCache(ddp_cache_data=merged)
        self.mask = torch.cat([_left_pad_mask(self.mask, length), _left_pad_mask(mask, length)])
        self.rows.extend(rows)


def row_kv(cache: DynamicCache, index: int, columns: torch.Tensor) -> torch.Tensor:
    """Row ``index``'s KV at ``columns`` as one tensor ``[layers, 2, kv_heads, n, head_dim]``."""
    return torch.stack(
        [
            torch.stack((layer.keys[index][:, columns], layer.values[index][:, columns]))
            for layer in cache.layers
        ]
    )


def cache_is_plain(cache: DynamicCache, length: int) -> bool:
    """Whether every layer keeps all ``length`` positions (no sliding window, no offload),
    the layout the prefix cache reads and writes."""
    return all(
        getattr(layer, "keys", None) is not None and layer.keys.shape[2] == length
        for layer in cache.layers
    )


def _padded_cache(prefixes: list[torch.Tensor | None], length: int) -> DynamicCache:
    """A batch cache of ``length`` columns holding each row's prefix KV, left-padded."""
    shape = next(p for p in prefixes if p is not None).shape
    layers, _, heads, _, dim = shape
    template = next(p for p in prefixes if p is not None)
    batch = template.new_zeros(layers, 2, len(prefixes), heads, length, dim)
    for i, prefix in enumerate(prefixes):
        if prefix is not None and prefix.shape[3]:
            batch[:, :, i, :, length - prefix.shape[3] :] = prefix
    return DynamicCache(
        ddp_cache_data=[(batch[layer, 0], batch[layer, 1]) for layer in range(layers)]
    )


def _left_pad(t: torch.Tensor, length: int) -> torch.Tensor:
    missing = length - t.shape[2]
    if missing == 0:
        return t
    pad = t.new_zeros(t.shape[0], t.shape[1], missing, t.shape[3])
    return torch.cat([pad, t], dim=2)


def _left_pad_mask(mask: torch.Tensor, length: int) -> torch.Tensor:
    missing = length - mask.shape[1]
    if missing == 0:
        return mask
    return torch.cat([mask.new_zeros(mask.shape[0], missing), mask], dim=1)


class BatchRunner:
    """The model-side step functions, called from the worker thread only."""

    def __init__(
        self,
        model: Any,
        *,
        pad_id: int,
        decode: Callable[[list[int]], str],
        raw_logprobs: bool,
        seed: int,
    ) -> None:
        self.model = model
        # Decode steps pack grouped query heads (decode_attention.py); everything else is
        # transformers' SDPA as before.
        self.decode_sdpa = use_decode_sdpa(model)
        # ... and on a plain Qwen3 model run without transformers' module calls (lean_decode.py)
        self.lean = LeanDecoder.for_model(model) if self.decode_sdpa else None
        self.cache_kwarg = cache_keyword(model)
        self.pad_id = pad_id
        self.decode = decode
        self.raw_logprobs = raw_logprobs
        self.generator = torch.Generator().manual_seed(seed)
        self.device = next(model.parameters()).device

    @torch.inference_mode()
    def prefill(
        self,
        rows: list[Row],
        version: int,
        prefixes: list[torch.Tensor | None] | None = None,
    ) -> tuple[DynamicCache, torch.Tensor]:
        """Prefill ``rows`` together; ``prefixes[i]`` is the cached KV of row i's first
        ``rows[i].cached_tokens`` tokens (``[L, 2, H, n, D]``) or None.

        Layout of each row: ``[pad | cached prefix | pad | new tokens]``; the cached region is
        right-aligned to the widest prefix and the new tokens to the longest remainder, so the
        forward sees one past cache and one block of new tokens. Positions come from the mask,
        so the holes change nothing but attention work on masked columns.
        """
        prefixes = prefixes or [None] * len(rows)
        past = max(r.cached_tokens for r in rows)
        length = max(len(r.prompt) - r.cached_tokens for r in rows)
        ids = torch.full((len(rows), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros(len(rows), past + length, dtype=torch.long)
        for i, row in enumerate(rows):
            new = row.prompt[row.cached_tokens :]
            ids[i, length - len(new) :] = torch.tensor(new)
            mask[i, past + length - len(new) :] = 1
            mask[i, past - row.cached_tokens : past] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, past:]
        cache = _padded_cache(prefixes, past) if past else DynamicCache()
        logits = self._forward(ids, mask, positions, cache)
        self._emit(rows, logits, version)
        return cache, mask

    @torch.inference_mode()
    def prefill_chunk(self, job: ChunkedPrefill, version: int, size: int) -> bool:
        """Prefill the next ``size`` prompt tokens of ``job``; True once the prompt is done
        (its first token is then emitted)."""
        prompt = job.row.prompt
        end = min(len(prompt), job.done + size)
        ids = torch.tensor([prompt[job.done : end]])
        mask = torch.ones(1, end, dtype=torch.long)
        positions = torch.arange(job.done, end).unsqueeze(0)
        make_growing(job.cache)  # each chunk appends in place, not a copy of all before it
        logits = self._forward(ids, mask, positions, job.cache)
        job.done = end
        if end < len(prompt):
            return False
        self._emit([job.row], logits, version)
        return True

    @torch.inference_mode()
    def decode_step(self, state: BatchState, version: int) -> None:
        assert state.mask is not None and state.cache is not None
        last = torch.tensor([[r.tokens[-1]] for r in state.rows])
        positions = state.mask.sum(-1, keepdim=True)
        make_growing(state.cache)  # the step writes one column instead of copying the cache
        state.mask = torch.cat([state.mask, state.mask.new_ones(len(state.rows), 1)], dim=1)
        if self.lean is not None:
            logits = self.lean(last, state.mask, positions, state.cache)
        else:
            logits = self._forward(last, state.mask, positions, state.cache)
        self._emit(state.rows, logits, version)

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: DynamicCache
    ) -> torch.Tensor:
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=True,
            **{self.cache_kwarg: cache},
            logits_to_keep=1,
        )
        return out.logits[:, -1, :].float().cpu()

    def _emit(self, rows: list[Row], logits: torch.Tensor, version: int) -> None:
        for i, row in enumerate(rows):
            if row.params.frequency_penalty and row.tokens:
                counts = torch.bincount(torch.tensor(row.tokens), minlength=logits.shape[1])
                logits[i] -= row.params.frequency_penalty * counts[: logits.shape[1]]
            if len(row.tokens) < row.min_new_tokens and row.stop_ids:
                logits[i, [t for t in row.stop_ids if t < logits.shape[1]]] = float("-inf")
        tokens, logprobs = sample(
            logits, [r.params for r in rows], self.generator, raw_logprobs=self.raw_logprobs
        )
        now = time.perf_counter()
        for row, tok, lp in zip(rows, tokens.tolist(), logprobs.tolist(), strict=True):
            row.tokens.append(tok)
            row.logprobs.append(lp)
            row.versions.append(version)
            if row.first_token_at is None:
                row.first_token_at = now
            row.stop_reason = stop_reason(
                row.tokens,
                row.budget,
                stop_ids=row.stop_ids,
                stop_strings=row.stop_strings,
                min_new_tokens=row.min_new_tokens,
                decode=self.decode,
            )
