# SPDX-License-Identifier: Apache-2.0
"""Rows joining and leaving a running batch: in place, and the same KV as copying it all."""

import asyncio
import random

import pytest
import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicSlidingWindowLayer

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.local.batching import BatchState
from areal_runtime.engine.local.growing_cache import compaction_order, make_growing

from .test_local import reference

LAYERS, HEADS, DIM = 2, 2, 4


def prefilled(rng: random.Random, rows: int) -> tuple[list[int], DynamicCache, torch.Tensor]:
    """``rows`` fresh rows (ids), their cache and a left-padded mask with holes, as a prefill
    with cached prefixes makes them."""
    width = rng.randint(1, 40)
    mask = torch.zeros(rows, width, dtype=torch.long)
    for r in range(rows):
        mask[r, rng.randint(0, width - 1) :] = 1
        mask[r, rng.randint(0, width - 1)] = 0 if rng.random() < 0.3 else 1
        mask[r, -1] = 1
    layers = [
        (torch.randn(rows, HEADS, width, DIM), torch.randn(rows, HEADS, width, DIM))
        for _ in range(LAYERS)
    ]
    ids = [rng.randrange(10**9) for _ in range(rows)]
    return ids, DynamicCache(ddp_cache_data=layers), mask


def kv_by_row(state: BatchState) -> dict[int, list[torch.Tensor]]:
    """Each row's KV at its unmasked columns, every layer: what attention can see."""
    assert state.mask is not None and state.cache is not None
    out = {}
    for i, row in enumerate(state.rows):
        columns = state.mask[i].bool()
        out[row] = [
            torch.cat([layer.keys[i][:, columns], layer.values[i][:, columns]])
            for layer in state.cache.layers
        ]
        for layer in state.cache.layers:  # padding is zeros, never stale memory (NaN * 0)
            assert torch.isfinite(layer.keys[i]).all() and torch.isfinite(layer.values[i]).all()
    return out


def step(state: BatchState, columns: dict[int, list[tuple[torch.Tensor, torch.Tensor]]]) -> None:
    """A decode step's cache writes: one column for every row (``columns[row][layer]``), in
    inference mode as the engine's forward runs."""
    assert state.cache is not None and state.mask is not None
    make_growing(state.cache)
    with torch.inference_mode():
        for index in range(LAYERS):
            k = torch.stack([columns[row][index][0] for row in state.rows])
            v = torch.stack([columns[row][index][1] for row in state.rows])
            state.cache.update(k, v, index)
    state.mask = torch.cat([state.mask, state.mask.new_ones(len(state.rows), 1)], dim=1)


def test_joins_steps_and_drops_keep_every_rows_kv():
    """Random joins (left-padded prompts with holes), decode steps and drops: every row keeps
    exactly the KV it was given at its unmasked columns, padding is trimmed as rows leave, and
    no drop copies the cache into a new buffer."""
    rng = random.Random(0)
    state = BatchState()
    expected: dict[int, list[torch.Tensor]] = {}  # row -> per layer, K and V at its columns
    span: dict[int, int] = {}  # row -> columns from its first unmasked one to the end
    drops = 0
    for _ in range(400):
        action = rng.random()
        if action < 0.3 or not state.rows:
            ids, cache, mask = prefilled(rng, rng.randint(1, 5))
            for i, row in enumerate(ids):
                seen = mask[i].bool()
                expected[row] = [
                    torch.cat([layer.keys[i][:, seen], layer.values[i][:, seen]])
                    for layer in cache.layers
                ]
                span[row] = mask.shape[1] - int(seen.nonzero()[0])
            state.merge(ids, cache, mask)
        elif action < 0.75:
            columns = {
                row: [(torch.randn(HEADS, 1, DIM), torch.randn(HEADS, 1, DIM))] * LAYERS
                for row in state.rows
            }
            step(state, columns)
            for row in state.rows:
                new = torch.cat(columns[row][0])
                expected[row] = [torch.cat([kv, new], 1) for kv in expected[row]]
                span[row] += 1
        else:
            gone = set(rng.sample(state.rows, rng.randint(1, len(state.rows))))
            buffer = getattr(state.cache.layers[0], "_kbuf", None)
            state.drop([i for i, row in enumerate(state.rows) if row not in gone])
            if state.rows:
                drops += 1
                assert buffer is None or state.cache.layers[0]._kbuf is buffer
                assert state.mask.shape[1] == max(span[row] for row in state.rows)
        if state.rows:
            for row, layers in kv_by_row(state).items():
                for got, want in zip(layers, expected[row], strict=True):
                    assert torch.equal(got, want)
    assert drops > 50


def test_a_drop_moves_as_many_rows_as_it_frees():
    assert compaction_order(6, [0, 1, 3, 4, 5]) == [0, 1, 5, 3, 4]
    assert compaction_order(6, [1, 2, 3, 4, 5]) == [5, 1, 2, 3, 4]
    assert compaction_order(6, [0, 1, 2]) == [0, 1, 2]
    assert compaction_order(3, []) == []


def test_joining_rows_are_written_into_spare_rows_of_the_same_buffer():
    rng = random.Random(1)
    state = BatchState()
    state.merge(*_rows(rng, 2, width=10))
    step(state, _columns(state))  # the first step moves the cache into a buffer (2 rows)
    state.merge(*_rows(rng, 1, width=5))  # a full buffer: a new one, with spare rows
    buffer = state.cache.layers[0]._kbuf
    for _ in range(3):  # shorter than the batch: written into the spare rows
        step(state, _columns(state))
        state.merge(*_rows(rng, 1, width=5))
        assert state.cache.layers[0]._kbuf is buffer
    assert len(state.rows) == 6


def test_a_new_buffers_spare_rows_stop_at_the_batch_limit():
    rng = random.Random(2)
    state = BatchState(max_rows=5)
    state.merge(*_rows(rng, 2, width=10))
    step(state, _columns(state))
    state.merge(*_rows(rng, 2, width=5))  # a new buffer: 4 rows + 4 spare, cut to 5
    assert state.cache.layers[0]._kbuf.shape[0] == 5
    state.merge(*_rows(rng, 1, width=5))  # the fifth row fits without a new buffer
    assert state.cache.layers[0]._kbuf.shape[0] == 5 and len(state.rows) == 5


def _columns(state: BatchState) -> dict[int, list[tuple[torch.Tensor, torch.Tensor]]]:
    return {row: [(torch.randn(HEADS, 1, DIM),) * 2] * LAYERS for row in state.rows}


def _rows(rng: random.Random, n: int, width: int) -> tuple[list[int], DynamicCache, torch.Tensor]:
    layers = [
        (torch.randn(n, HEADS, width, DIM), torch.randn(n, HEADS, width, DIM))
        for _ in range(LAYERS)
    ]
    return (
        [rng.randrange(10**9) for _ in range(n)],
        DynamicCache(ddp_cache_data=layers),
        torch.ones(n, width, dtype=torch.long),
    )


def test_other_layer_kinds_keep_transformers_copies():
    cache = DynamicCache()
    layer = DynamicSlidingWindowLayer(sliding_window=64)
    layer.update(torch.randn(2, HEADS, 3, DIM), torch.randn(2, HEADS, 3, DIM))
    cache.layers.append(layer)
    state = BatchState()
    state.rows, state.cache, state.mask = [1, 2], cache, torch.ones(2, 3, dtype=torch.long)
    expect = layer.keys[1:].clone()
    state.drop([1])
    assert type(state.cache.layers[0]) is DynamicSlidingWindowLayer
    assert torch.equal(state.cache.layers[0].keys, expect)


@pytest.mark.asyncio
async def test_many_rows_joining_and_leaving_decode_as_generate_does(random_model, tok):
    """40 requests of 3-30 tokens through an 8-row batch, arriving over time: every join, drop,
    trim and spare-row growth in between, and each greedy answer is ``generate``'s."""
    rng = random.Random(3)
    jobs = [
        (tok.encode("What is 1+2? " * rng.randint(1, 8)), rng.randint(3, 30)) for _ in range(40)
    ]
    engine = LocalEngine(random_model, tok, max_batch=8)

    async def one(i: int, prompt: list[int], new: int):
        await asyncio.sleep(0.002 * i)
        g = GenerationHyperparameters(max_new_tokens=new, greedy=True)
        return await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))

    try:
        answers = await asyncio.gather(*(one(i, p, n) for i, (p, n) in enumerate(jobs)))
    finally:
        engine.close()
    for (prompt, new), answer in zip(jobs, answers, strict=True):
        tokens, logprobs = reference(random_model, prompt, new)
        assert answer.output_tokens == tokens
        assert max(abs(a - b) for a, b in zip(answer.output_logprobs, logprobs)) < 1e-5
