# SPDX-License-Identifier: Apache-2.0
"""What one eviction costs in the local engine's prefix cache, as the cache grows.

A cache at its budget holds ``N`` blocks as chains of 8 (prompts of 8 blocks sharing nothing);
each timed call inserts one new block, so exactly one block (the least recently used leaf) is
evicted. The cost of the insert alone is measured with a budget that evicts nothing. With
``--baseline REF`` the same runs use the prefix cache of that git revision too (side by side,
alternating), e.g. ``--baseline 4555dc1``, the last commit whose cache walked the trie. Run:
``PYTHONPATH=benchmarks python benchmarks/bench_prefix_cache_eviction.py [--baseline REF]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import types
from typing import Any

import torch
from _util import module_at, table

from areal_runtime.engine.local import prefix_cache

BLOCK = 4
CHAIN = 8


def load_revision(ref: str) -> types.ModuleType:
    """``prefix_cache.py`` as it was at ``ref``."""
    return module_at(ref, "areal_runtime/engine/local/prefix_cache.py")


def insert(cache: Any, tokens: list[int], kv: torch.Tensor) -> None:
    if hasattr(cache, "match"):
        cache.insert(tokens, kv)
    else:  # before the request verbs: insert(tokens, kv, start, epoch)
        cache.insert(tokens, kv, 0, cache.epoch)


def filled(module: types.ModuleType, nodes: int, budget_blocks: int) -> Any:
    block_kv = torch.zeros(1, 2, 1, BLOCK, 4)
    cache = module.PrefixCache(budget_bytes=budget_blocks * block_kv.nbytes, block=BLOCK)
    chain_kv = torch.zeros(1, 2, 1, BLOCK * CHAIN, 4)
    for chain in range(nodes // CHAIN):
        tokens = [chain * CHAIN + i for i in range(CHAIN) for _ in range(BLOCK)]
        insert(cache, tokens, chain_kv)
    return cache


def per_insert_us(module: types.ModuleType, nodes: int, evicting: bool, calls: int) -> float:
    """Median microseconds of one single-block insert into a cache of ``nodes`` blocks."""
    cache = filled(module, nodes, nodes if evicting else 10 * nodes)
    block_kv = torch.zeros(1, 2, 1, BLOCK, 4)
    times = []
    for i in range(calls):
        tokens = [-1 - i] * BLOCK
        start = time.perf_counter()
        insert(cache, tokens, block_kv)
        times.append(time.perf_counter() - start)
    assert cache.stats.evicted_tokens == (calls * BLOCK if evicting else 0)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--calls", type=int, default=200, help="timed inserts per setting")
    parser.add_argument("--baseline", help="a git revision to compare with")
    args = parser.parse_args()
    torch.set_num_threads(1)
    versions = {"this tree": prefix_cache}
    if args.baseline:
        versions = {args.baseline: load_revision(args.baseline), **versions}
    print(f"this tree: {prefix_cache.__file__}, load {os.getloadavg()[0]:.1f}")
    rows = []
    for nodes in args.nodes:
        for name, module in versions.items():
            evicting = per_insert_us(module, nodes, True, args.calls)
            plain = per_insert_us(module, nodes, False, args.calls)
            rows.append([name, nodes, f"{plain:.0f}", f"{evicting:.0f}", f"{evicting - plain:.0f}"])
    headers = ["prefix cache", "blocks cached", "insert us", "insert + 1 eviction us"]
    print(table([*headers, "eviction us"], rows))
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
