# SPDX-License-Identifier: Apache-2.0
"""The prefix cache's request verbs: extra keys, holds, epochs, and eviction that never walks."""

import asyncio
import threading

import pytest
import torch

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.local import lru_leaves as lru_module
from areal_runtime.engine.local.lru_leaves import LruLeaves
from areal_runtime.engine.local.prefix_cache import PrefixCache, images_key

from .test_local import reference

BLOCK = 4
BLOCK_BYTES = 2 * 2 * 1 * BLOCK * 4 * 4  # [layers, k/v, heads, block, head_dim] float32


def kv(n: int, fill: float = 1.0) -> torch.Tensor:
    return torch.full((2, 2, 1, n, 4), fill)


def one_block(i: int) -> list[int]:
    return [i] * BLOCK


def test_an_extra_key_partitions_the_cache():
    cache = PrefixCache(budget_bytes=1 << 20, block=BLOCK)
    tokens = list(range(9))
    cache.insert(tokens, kv(9, 1.0), extra_key="cat.png")
    cache.insert(tokens, kv(9, 2.0), extra_key="dog.png")
    assert cache.reusable(tokens) == 0  # no images: nothing of either
    assert cache.reusable(tokens, "bird.png") == 0
    cat, dog = cache.match(tokens, "cat.png"), cache.match(tokens, "dog.png")
    assert cat.tokens == dog.tokens == 8
    assert cat.take_kv().unique().tolist() == [1.0] and dog.take_kv().unique().tolist() == [2.0]
    assert cat.take_kv() is None  # handed over once
    # Admission: a prompt waits a turn for another computing the same uncached block.
    assert cache.shares_new_blocks(tokens, 0, [tokens])
    assert not cache.shares_new_blocks(tokens, 8, [tokens])  # its only new token is no block
    with pytest.raises(ValueError, match="extra_key differs"):
        cache.insert([*tokens, 9, 9, 9], kv(12), "dog.png", hit=cat)


def test_images_key_tells_image_lists_apart():
    assert images_key(None) is None and images_key([]) is None
    assert images_key(["aGVsbG8="]) == images_key(["aGVsbG8="])
    assert images_key(["aGVsbG8="]) != images_key(["aGVsbG9="])
    assert images_key(["ab", "c"]) != images_key(["a", "bc"])  # lengths are in the digest


def test_eviction_takes_least_recently_used_leaves_and_keeps_the_budget():
    cache = PrefixCache(budget_bytes=8 * BLOCK_BYTES, block=BLOCK)
    for i in range(8):
        cache.insert(one_block(i), kv(BLOCK))
    for i in (0, 5, 2):  # used again, in this order: 1, 3, 4, 6, 7 are now the oldest
        cache.release(cache.match([*one_block(i), 0]))
    for i in range(100, 105):
        cache.insert(one_block(i), kv(BLOCK))
    assert cache.stats.evicted_tokens == 5 * BLOCK
    kept = [i for i in (*range(8), *range(100, 105)) if cache.reusable([*one_block(i), 0])]
    assert kept == [0, 2, 5, 100, 101, 102, 103, 104]
    cache.insert(one_block(200), kv(BLOCK))
    assert not cache.reusable([*one_block(0), 0])  # now 0 is the oldest

    # Many inserts of chains that share and diverge: the budget holds after every one.
    generator = torch.Generator().manual_seed(0)
    for _ in range(400):
        length = int(torch.randint(1, 6, (1,), generator=generator)) * BLOCK
        tokens = torch.randint(0, 3, (length,), generator=generator).tolist()
        cache.insert(tokens, kv(length))
        assert cache.nbytes <= cache.budget_bytes
    assert cache.nbytes == cache.stats.cached_tokens // BLOCK * BLOCK_BYTES


def test_a_held_path_is_not_evicted_until_released():
    cache = PrefixCache(budget_bytes=2 * BLOCK_BYTES, block=BLOCK)
    prompt = one_block(1) + one_block(2)
    cache.insert(prompt, kv(8))
    hit = cache.match([*prompt, 0])  # a running request holds both blocks
    cache.insert(one_block(3), kv(BLOCK))  # over budget, but only the new leaf is free
    assert cache.reusable([*prompt, 0]) == 8 and not cache.reusable([*one_block(3), 0])
    # The request's answer extends its prompt: inserted under its hold, over budget meanwhile.
    answer = [*prompt, 7, 7, 7, 7]
    assert cache.insert(answer, lambda begin, end: kv(end - begin), hit=hit) == BLOCK
    assert cache.nbytes == 3 * BLOCK_BYTES
    cache.release(hit)
    cache.release(hit)  # twice is harmless
    assert cache.nbytes == 2 * BLOCK_BYTES and cache.reusable([*answer, 0]) == 8


def test_new_weights_start_an_epoch_that_refuses_older_kv():
    cache = PrefixCache(budget_bytes=1 << 20, block=BLOCK)
    prompt = one_block(1) * 3
    cache.insert(prompt, kv(12))
    hit = cache.match([*prompt, 0])
    miss = cache.match(one_block(9) * 2)
    epoch = cache.epoch
    trainer = threading.Thread(target=cache.new_weights)  # another thread may call it
    trainer.start()
    trainer.join()
    assert cache.epoch == epoch + 1
    assert cache.nbytes == 0 and cache.stats.cached_tokens == 0 and cache.stats.flushes == 1
    assert cache.reusable([*prompt, 0]) == 0
    # Requests matched before the new weights computed their KV with the old ones.
    assert cache.insert([*prompt, 5, 5, 5, 5], kv(16), hit=hit) == 0
    assert cache.insert(one_block(9) * 2, kv(8), hit=miss) == 0
    cache.release(hit)  # its old path is gone; releasing it frees nothing new
    assert cache.nbytes == 0
    assert cache.insert(prompt, kv(12)) == 12  # KV computed now goes in
    assert cache.reusable([*prompt, 0]) == 12


def test_a_reader_is_called_only_for_the_blocks_stored():
    cache = PrefixCache(budget_bytes=1 << 20, block=BLOCK)
    spans = []

    def reader(begin, end):
        spans.append((begin, end))
        return kv(end - begin)

    hit = cache.match([1, 2, 3, 4, 5, 6])
    cache.insert([1, 2, 3, 4, 5, 6], reader, hit=hit)  # the prompt: one whole block
    cache.insert([1, 2, 3, 4, 5, 6, 7], reader, hit=hit)  # no new whole block: nothing read
    cache.insert([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], reader, hit=hit)
    assert spans == [(0, 4), (4, 12)]
    assert cache.insert([1, 2, 3, 4, 9, 9, 9, 9], lambda b, e: None) == 0  # no KV, no entry
    with pytest.raises(ValueError, match="do not continue"):
        cache.insert([9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9], reader, hit=hit)


def test_an_eviction_costs_heap_pops_not_a_walk_of_the_trie(monkeypatch):
    cache = PrefixCache(budget_bytes=10_000 * BLOCK_BYTES, block=BLOCK)
    piece = kv(BLOCK)
    for i in range(10_000):  # 10k single-block leaves under one root
        cache.insert(one_block(i), piece)
    assert cache.stats.evicted_tokens == 0 and cache.nbytes == 10_000 * BLOCK_BYTES
    pops = []
    real_pop = lru_module.heapq.heappop

    class CountingHeapq:
        heappush = staticmethod(lru_module.heapq.heappush)
        heapify = staticmethod(lru_module.heapq.heapify)

        @staticmethod
        def heappop(heap):
            pops.append(1)
            return real_pop(heap)

    monkeypatch.setattr(lru_module, "heapq", CountingHeapq)
    for i in range(100):
        cache.insert(one_block(20_000 + i), piece)
    assert cache.stats.evicted_tokens == 100 * BLOCK
    assert len(pops) == 100  # one pop per eviction, whatever the trie holds
    assert not cache.reusable([*one_block(0), 0]) and cache.reusable([*one_block(100), 0])


def test_lru_leaves_skip_stale_entries_and_compact():
    leaves: LruLeaves[str] = LruLeaves()
    for tick, name in enumerate("abcde"):
        leaves.add(name, tick)
    leaves.add("a", 10)  # used again: now the newest
    leaves.discard("c")
    assert "c" not in leaves and len(leaves) == 4
    for tick in range(200):  # many moves: the heap is compacted, the order kept
        leaves.add("d", 100 + tick)
    assert len(leaves._heap) <= 2 * len(leaves) + 64
    assert [leaves.pop_oldest() for _ in range(5)] == ["b", "e", "a", "d", None]


@pytest.mark.asyncio
async def test_equal_tokens_with_other_images_share_no_kv(random_model, tok):
    prompt = list(range(10, 50))
    g = GenerationHyperparameters(max_new_tokens=3, greedy=True, ignore_eos=True)
    engine = LocalEngine(random_model, tok, prefix_cache_block=BLOCK)
    hits = []
    try:
        for images in (["aW1hZ2UtMQ=="], ["aW1hZ2UtMg=="], ["aW1hZ2UtMQ=="], []):
            before = engine.prefix_cache_stats().hit_tokens
            resp = await engine.agenerate(
                ModelRequest(input_ids=prompt, gconfig=g, image_data=images)
            )
            hits.append(engine.prefix_cache_stats().hit_tokens - before)
            assert resp.output_tokens == reference(random_model, prompt, 3)[0]
        # All three done: every hold was released, so a tiny budget can evict everything.
        engine._prefix._budget = 1
        engine._prefix.insert([1, 2, 3, 4], kv(BLOCK))  # an insert evicts what it can
        assert engine._prefix.nbytes == 0
    finally:
        await asyncio.to_thread(engine.close)
    assert hits == [0, 0, 36, 0]  # only the same image again reuses (9 blocks of 4)


def test_extra_keys_leave_nothing_behind_once_their_blocks_are_gone():
    # One key per image: a long run sees many, so a key's empty part must not stay behind.
    cache = PrefixCache(budget_bytes=2 * BLOCK_BYTES, block=BLOCK)
    for image in range(50):
        cache.insert(one_block(1), kv(BLOCK), extra_key=f"image-{image}")
    assert sorted(cache._roots) == ["image-48", "image-49"]
    cache.insert(one_block(1), lambda begin, end: None, extra_key="unreadable")
    assert "unreadable" not in cache._roots
