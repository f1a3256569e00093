# SPDX-License-Identifier: Apache-2.0
"""Long-context decode: an in-place KV cache and packed-GQA attention, same numbers as before."""

import copy

import pytest
import torch
from transformers import DynamicCache
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from areal_runtime.api import ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.local.decode_attention import (
    NAME,
    chunk_after_cache,
    decode_sdpa,
    use_decode_sdpa,
)
from areal_runtime.engine.local.growing_cache import GrowingLayer, make_growing

from .conftest import tiny_qwen3
from .test_local import reference, stock
from .test_prefix_cache import _serve, greedy


def kv(batch: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 2, n, 8, generator=g), torch.randn(batch, 2, n, 8, generator=g)


def test_growing_layer_appends_in_place_and_matches_concatenation():
    keys, values = kv(2, 5, 0)
    cache = make_growing(DynamicCache(ddp_cache_data=[(keys, values)]))
    layer = cache.layers[0]
    assert isinstance(layer, GrowingLayer)
    expect_k, expect_v = keys, values
    pointers = set()
    for step in range(40):
        k, v = kv(2, 1, step + 1)
        got_k, got_v = cache.update(k, v, 0)
        expect_k, expect_v = torch.cat([expect_k, k], 2), torch.cat([expect_v, v], 2)
        assert torch.equal(got_k, expect_k) and torch.equal(got_v, expect_v)
        pointers.add(got_k.data_ptr())
    # 45 columns in one buffer: built once on the first step (5 + 256 spare), never copied again
    assert len(pointers) == 1 and cache.get_seq_length() == 45


def test_growing_layer_follows_row_selection_and_grows_past_its_spare_room():
    keys, values = kv(3, 4, 0)
    cache = make_growing(DynamicCache(ddp_cache_data=[(keys, values)]))
    cache.update(*kv(3, 1, 1), 0)
    cache.batch_select_indices(torch.tensor([0, 2]))  # a finished row dropped: a copy
    expect = torch.cat([keys, kv(3, 1, 1)[0]], 2)[[0, 2]]
    k, _ = cache.update(*kv(2, 300, 2), 0)  # more than the spare room: a bigger buffer
    assert torch.equal(k, torch.cat([expect, kv(2, 300, 2)[0]], 2))
    k, _ = cache.update(*kv(2, 1, 3), 0)
    assert k.shape == (2, 2, 306, 8) and torch.equal(k[:, :, -1:], kv(2, 1, 3)[0])


def test_sliding_window_layers_are_left_alone():
    from transformers.cache_utils import DynamicSlidingWindowLayer

    cache = DynamicCache()
    cache.layers.append(DynamicSlidingWindowLayer(sliding_window=4))
    make_growing(cache)
    assert type(cache.layers[0]) is DynamicSlidingWindowLayer


def test_decode_sdpa_matches_transformers_sdpa(random_model):
    module = random_model.model.layers[0].self_attn  # 4 query heads over 2 KV heads
    g = torch.Generator().manual_seed(0)
    key, value = torch.randn(3, 2, 700, 16, generator=g), torch.randn(3, 2, 700, 16, generator=g)
    mask = torch.ones(3, 1, 1, 700, dtype=torch.bool)
    mask[1, ..., :200] = False  # a left-padded row
    for q_len, m in ((1, None), (1, mask), (5, None)):
        query = torch.randn(3, 4, q_len, 16, generator=g)
        ours, _ = decode_sdpa(module, query, key, value, m, scaling=0.25)
        theirs, _ = sdpa_attention_forward(module, query, key, value, m, scaling=0.25)
        assert ours.shape == theirs.shape == (3, q_len, 4, 16)
        if q_len == 1:
            assert torch.allclose(ours, theirs, atol=1e-6)
        else:  # not a decode step: transformers' own function, bit for bit
            assert torch.equal(ours, theirs)


def test_a_chunk_after_cached_tokens_matches_transformers_sdpa(random_model):
    """A chunk of a chunked prefill (one row, every cached column visible, its own causal) takes
    the unmasked two-part path; any other mask goes to transformers' function, bit for bit."""
    module = random_model.model.layers[0].self_attn
    g = torch.Generator().manual_seed(1)
    past, q_len = 600, 40
    key = torch.randn(1, 2, past + q_len, 16, generator=g)
    value = torch.randn(1, 2, past + q_len, 16, generator=g)
    query = torch.randn(1, 4, q_len, 16, generator=g)
    columns = torch.arange(past + q_len)
    mask = (columns[None, :] <= columns[past:, None])[None, None]  # what transformers builds
    holed = mask.clone()
    holed[..., :100] = False  # a left-padded row: not a plain chunk
    assert chunk_after_cache(module, query, key, mask, {})
    assert not chunk_after_cache(module, query, key, holed, {})
    ours, _ = decode_sdpa(module, query, key, value, mask, scaling=0.25)
    theirs, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.25)
    assert ours.shape == theirs.shape == (1, q_len, 4, 16)
    assert torch.allclose(ours, theirs, atol=1e-6) and not torch.equal(ours, theirs)
    ours, _ = decode_sdpa(module, query, key, value, holed, scaling=0.25)
    theirs, _ = sdpa_attention_forward(module, query, key, value, holed, scaling=0.25)
    assert torch.equal(ours, theirs)


def test_only_sdpa_models_are_switched(random_model):
    model = stock(random_model)  # earlier tests' engines may have switched the shared model
    assert model.config._attn_implementation == "sdpa"
    assert use_decode_sdpa(model) and model.config._attn_implementation == NAME
    model.set_attn_implementation("eager")
    assert not use_decode_sdpa(model) and model.config._attn_implementation == "eager"


@pytest.fixture(scope="module")
def long_model():
    """The random test model's shape with room for a few thousand positions."""
    return tiny_qwen3(4096, seed=1)


@pytest.mark.asyncio
async def test_long_context_decode_matches_generate(long_model, tok):
    # 3000 positions prefilled in chunks while a short row decodes beside it (a left-padded
    # batch: the masked path), then decoding alone (no mask); a second send of the prompt with
    # one more token starts from the prefix cache's copy of the first one's KV.
    long_prompt = [(11 * i) % 480 + 20 for i in range(3000)]
    short, longer = [1, 2, 3], [*long_prompt, 7]
    model = copy.deepcopy(long_model)
    engine = LocalEngine(model, tok, prefill_chunk_tokens=512)
    assert model.config._attn_implementation == NAME
    try:
        first_short, first_long = await _serve(engine, [short, long_prompt], [40, 24], 0.01)
    finally:
        engine.close()
    engine = LocalEngine(model, tok, prefill_chunk_tokens=512)
    try:
        await engine.agenerate(ModelRequest(input_ids=long_prompt, gconfig=greedy(2)))
        again = await engine.agenerate(ModelRequest(input_ids=longer, gconfig=greedy(16)))
    finally:
        engine.close()
    assert engine.prefix_cache_stats().hit_tokens == 3000 - 3000 % 16
    assert long_model.config._attn_implementation == "sdpa"  # references: stock transformers
    cases = ((first_short, short, 40), (first_long, long_prompt, 24), (again, longer, 16))
    for response, prompt, n in cases:
        tokens, logprobs = reference(long_model, prompt, n)
        assert response.output_tokens == tokens
        assert max(abs(a - b) for a, b in zip(response.output_logprobs, logprobs)) < 1e-5
