# SPDX-License-Identifier: Apache-2.0
"""The local engine's prefix cache and chunked prefill: same numbers, less work."""

import asyncio
import copy

import pytest
import torch

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.local.prefix_cache import PrefixCache

from .test_local import reference

SYSTEM = list(range(10, 50))  # 40 shared tokens, like a system prompt with tool schemas


def greedy(n: int) -> GenerationHyperparameters:
    return GenerationHyperparameters(max_new_tokens=n, greedy=True, ignore_eos=True)


def kv(n: int, fill: float = 1.0) -> torch.Tensor:
    return torch.full((2, 2, 1, n, 4), fill)  # [layers, k/v, heads, tokens, head_dim]


def test_lookup_reuses_whole_blocks_and_leaves_one_token_to_compute():
    cache = PrefixCache(budget_bytes=1 << 20, block=4)
    tokens = list(range(10))
    cache.insert(tokens, torch.arange(10.0).expand(2, 2, 1, 10).unsqueeze(-1))
    assert cache.stats.cached_tokens == 8  # two whole blocks; the last 2 tokens are no block
    hit = cache.match([*tokens, 99])
    prefix = hit.take_kv()
    assert hit.tokens == 8 and prefix[0, 0, 0, :, 0].tolist() == list(range(8))
    assert cache.match(tokens[:8]).tokens == 4  # the 8th token must be computed for its logits
    assert cache.match([0, 1, 2, 9, 4]).tokens == 0  # blocks match whole or not at all
    assert cache.stats.hit_tokens == 12 and cache.stats.prompt_tokens == 24


def test_eviction_drops_least_recently_used_leaves_and_clear_refuses_old_kv():
    block_bytes = kv(4).numel() * 4
    cache = PrefixCache(budget_bytes=3 * block_bytes, block=4)
    a, b = [1, 1, 1, 1, 2, 2, 2, 2], [1, 1, 1, 1, 3, 3, 3, 3]
    cache.insert(a, kv(8))
    cache.insert(b, kv(8))  # shares a's first block: 3 blocks in all
    assert cache.nbytes == 3 * block_bytes
    cache.release(cache.match([*a, 0]))  # a is now the most recent
    cache.insert([5, 5, 5, 5], kv(4))  # over budget: b's leaf goes
    assert cache.reusable([*a, 0]) == 8 and cache.reusable([*b, 0]) == 4
    assert cache.reusable([5, 5, 5, 5, 0]) == 4 and cache.stats.evicted_tokens == 4
    old = cache.match([7, 7, 7, 7, 7])  # a request that started before the new weights
    cache.new_weights()
    assert cache.reusable([*a, 0]) == 0 and cache.nbytes == 0
    cache.insert(a, kv(8), hit=old)  # computed with the old weights: dropped
    assert cache.reusable([*a, 0]) == 0


def test_bad_settings_are_refused_with_the_field_named(random_model, tok):
    with pytest.raises(ValueError, match="block must be >= 1"):
        PrefixCache(1, block=0)
    with pytest.raises(ValueError, match="prefill_chunk_tokens must be >= 1"):
        LocalEngine(random_model, tok, prefill_chunk_tokens=0)


async def _serve(engine, prompts, budgets, stagger=0.004):
    async def one(i, prompt):
        await asyncio.sleep(stagger * i)
        return await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(budgets[i])))

    try:
        return await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts)))
    finally:
        engine.close()


@pytest.mark.asyncio
async def test_cached_engine_matches_generate_in_left_padded_batches(random_model, tok):
    # Different tails after one shared prefix: each batch mixes rows with and without a hit,
    # hits of different lengths, and left padding both in the prefix and the new tokens.
    tails = [[60 + k] * k for k in (3, 9, 1, 14, 5, 2, 11, 7)]
    prompts = [SYSTEM + t for t in tails] + [[*SYSTEM[:12], 70, 71]] + [SYSTEM + tails[3]]
    budgets = [5 + i % 4 for i in range(len(prompts))]
    engine = LocalEngine(random_model, tok, max_batch=4, prefix_cache_block=4)
    responses = await _serve(engine, prompts, budgets)
    stats = engine.prefix_cache_stats()
    assert stats.hit_tokens >= 7 * 36  # every later SYSTEM prompt reused 9 blocks at least
    for prompt, budget, resp in zip(prompts, budgets, responses, strict=True):
        tokens, logprobs = reference(random_model, prompt, budget)
        assert resp.output_tokens == tokens
        assert max(abs(a - b) for a, b in zip(resp.output_logprobs, logprobs)) < 1e-5


@pytest.mark.asyncio
async def test_identical_prompts_of_a_group_prefill_once(random_model, tok):
    prompt = [*SYSTEM, 60, 61, 62]
    engine = LocalEngine(random_model, tok, prefix_cache_block=4)
    responses = await _serve(engine, [prompt] * 4, [6] * 4, stagger=0)
    stats = engine.prefix_cache_stats()
    assert stats.hit_tokens == 3 * 40  # the three others waited a turn and reused 10 blocks
    tokens, _ = reference(random_model, prompt, 6)
    assert all(r.output_tokens == tokens for r in responses)


@pytest.mark.asyncio
async def test_next_turn_reuses_the_previous_answer(random_model, tok):
    engine = LocalEngine(random_model, tok, prefix_cache_block=4)
    try:
        first = await engine.agenerate(ModelRequest(input_ids=SYSTEM, gconfig=greedy(12)))
        turn2 = SYSTEM + first.output_tokens + [80, 81, 82]
        before = engine.prefix_cache_stats().hit_tokens
        second = await engine.agenerate(ModelRequest(input_ids=turn2, gconfig=greedy(6)))
    finally:
        engine.close()
    # prompt 40 + 11 answer tokens with KV = 51 tokens -> 12 whole blocks (48 tokens)
    assert engine.prefix_cache_stats().hit_tokens - before == 48
    assert second.output_tokens == reference(random_model, turn2, 6)[0]


@pytest.mark.asyncio
async def test_cancelled_request_leaves_nothing_wrong_behind(random_model, tok):
    prompt = [*SYSTEM, 60, 61]
    engine = LocalEngine(random_model, tok, prefix_cache_block=4)
    try:
        call = asyncio.ensure_future(
            engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(200)))
        )
        await asyncio.sleep(0.02)
        call.cancel()
        again = await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(8)))
    finally:
        engine.close()
    assert call.cancelled()
    assert engine.prefix_cache_stats().hit_tokens == 40
    tokens, logprobs = reference(random_model, prompt, 8)
    assert again.output_tokens == tokens
    assert max(abs(a - b) for a, b in zip(again.output_logprobs, logprobs)) < 1e-5


@pytest.mark.asyncio
async def test_new_weights_flush_the_cache(random_model, tok):
    model = copy.deepcopy(random_model)
    changed = {k: v * 1.5 if "mlp" in k else v.clone() for k, v in model.state_dict().items()}
    prompt = [*SYSTEM, 60, 61]
    engine = LocalEngine(model, tok, prefix_cache_block=4)
    try:
        await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(4)))
        await asyncio.wrap_future(engine.update_weights(changed))
        after = await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(8)))
        engine.set_version(7)  # a new version from the trainer: flushed too
        await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=greedy(1)))
    finally:
        engine.close()
    stats = engine.prefix_cache_stats()
    assert stats.hit_tokens == 0 and stats.flushes == 2
    tokens, logprobs = reference(model, prompt, 8)  # model now holds the new weights
    assert after.output_tokens == tokens
    assert max(abs(a - b) for a, b in zip(after.output_logprobs, logprobs)) < 1e-5


@pytest.mark.asyncio
async def test_cache_off_computes_every_token(random_model, tok):
    engine = LocalEngine(random_model, tok, prefix_cache_bytes=0)
    await _serve(engine, [[*SYSTEM, 60]] * 3, [2] * 3, stagger=0.01)
    stats = engine.prefix_cache_stats()
    assert stats.hit_tokens == 0 and stats.prompt_tokens == 3 * 41 and stats.cached_tokens == 0


@pytest.mark.asyncio
async def test_chunked_prefill_is_exact_and_lets_the_batch_keep_decoding(random_model, tok):
    long_prompt = [(7 * i) % 400 + 20 for i in range(150)]
    steps_during_prefill = []

    def counting(engine):
        inner = engine._runner.decode_step

        def step(state, version):
            steps_during_prefill.append(engine._chunk is not None)
            inner(state, version)

        engine._runner.decode_step = step
        return engine

    for chunk in (16, None):
        steps_during_prefill.clear()
        engine = counting(LocalEngine(random_model, tok, prefill_chunk_tokens=chunk))
        short, long = await _serve(engine, [[1, 2, 3], long_prompt], [60, 5], stagger=0.01)
        if chunk is not None:
            # 150 tokens in chunks of 16: 10 chunks, a decode step of the short row between each
            assert sum(steps_during_prefill) >= 9
        assert short.output_tokens == reference(random_model, [1, 2, 3], 60)[0]
        tokens, logprobs = reference(random_model, long_prompt, 5)
        assert long.output_tokens == tokens
        assert max(abs(a - b) for a, b in zip(long.output_logprobs, logprobs)) < 1e-5


@pytest.mark.asyncio
async def test_chunked_prefill_starts_from_the_cached_prefix(random_model, tok):
    prompt = [(5 * i) % 300 + 20 for i in range(120)]
    engine = LocalEngine(random_model, tok, prefill_chunk_tokens=16, prefix_cache_block=8)
    responses = await _serve(engine, [prompt, [*prompt, 9, 9]], [4, 4], stagger=0.3)
    assert engine.prefix_cache_stats().hit_tokens == 120
    assert responses[1].output_tokens == reference(random_model, [*prompt, 9, 9], 4)[0]


@pytest.mark.asyncio
async def test_a_long_prompt_alone_is_prefilled_in_one_forward(random_model, tok):
    # Chunks only pay off when someone else is waiting: alone, the causal kernel is faster.
    engine = LocalEngine(random_model, tok, prefill_chunk_tokens=16)
    sizes = []
    inner = engine._runner.prefill_chunk

    def counting(job, version, size):
        sizes.append(size)
        return inner(job, version, size)

    engine._runner.prefill_chunk = counting
    prompt = [(3 * i) % 300 + 20 for i in range(100)]
    (resp,) = await _serve(engine, [prompt], [3])
    assert sizes == [100]
    assert resp.output_tokens == reference(random_model, prompt, 3)[0]
