# SPDX-License-Identifier: Apache-2.0
"""A prefix cache for the local engine: the KV of token prefixes already computed, reused.

Agents re-send their whole history every turn and every episode of a group re-sends the same
system prompt and tool schemas, so most prompt tokens were computed before. Like SGLang's radix
cache and vLLM's automatic prefix caching, this keeps their KV and hands it to later requests.

The cache is a trie of fixed-size token blocks (vLLM's pages): node ``n`` holds the keys and
values of its ``block`` tokens, computed after every token on the path above it, as one tensor
``[layers, 2, kv_heads, block, head_dim]``. Only whole blocks are shared, so a hit is a multiple
of ``block`` tokens. Past ``budget_bytes`` the least recently used leaves go first (a node's
parent is never evicted before it). The worker thread owns the cache; ``clear`` (new weights)
drops everything, so no KV computed with old weights is ever reused.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import torch


@dataclass
class PrefixCacheStats:
    """Counters since the engine started; ``hit_rate`` is the share of prompt tokens reused."""

    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    cached_tokens: int = 0
    evicted_tokens: int = 0
    flushes: int = 0

    @property
    def hit_rate(self) -> float:
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def summary(self) -> str:
        """One line for a command's summary."""
        return (
            f"prefix cache: {self.hit_rate:.0%} of {self.prompt_tokens} prompt tokens reused "
            f"({self.hit_tokens} from cache, {self.requests} requests)"
        )


class _Node:
    __slots__ = ("children", "key", "kv", "last_used", "parent")

    def __init__(self, parent: _Node | None, key: tuple[int, ...], kv: torch.Tensor | None):
        self.children: dict[tuple[int, ...], _Node] = {}
        self.parent = parent
        self.key = key
        self.kv = kv
        self.last_used = 0


class PrefixCache:
    """Block trie of KV tensors bounded by ``budget_bytes`` with LRU eviction of leaves."""

    def __init__(self, budget_bytes: int, block: int = 16) -> None:
        if block < 1:
            raise ValueError(f"the prefix cache block must be >= 1 token, got {block}")
        if budget_bytes < 0:
            raise ValueError(f"the prefix cache budget must be >= 0 bytes, got {budget_bytes}")
        self.budget_bytes = budget_bytes
        self.block = block
        self.stats = PrefixCacheStats()
        self.epoch = 0  # bumped by clear(): KV computed in an older epoch is never inserted
        self._root = _Node(None, (), None)
        self._bytes = 0
        self._clock = itertools.count(1)

    @property
    def enabled(self) -> bool:
        return self.budget_bytes > 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def _walk(self, tokens: list[int], most: int) -> list[_Node]:
        """Nodes matching ``tokens`` from the start, at most ``most`` tokens' worth."""
        nodes: list[_Node] = []
        node = self._root
        b = self.block
        for start in range(0, most - most % b, b):
            child = node.children.get(tuple(tokens[start : start + b]))
            if child is None:
                break
            nodes.append(child)
            node = child
        return nodes

    def reusable(self, tokens: list[int]) -> int:
        """How many leading tokens of a prompt a lookup would reuse (no stats, no touch).

        At least one token is always left to compute: its logits give the first output token.
        """
        if not self.enabled:
            return 0
        return len(self._walk(tokens, len(tokens) - 1)) * self.block

    def lookup(self, tokens: list[int]) -> tuple[int, torch.Tensor | None]:
        """``(hit, kv)``: the reused length and its KV ``[L, 2, H, hit, D]`` (a copy)."""
        self.stats.requests += 1
        self.stats.prompt_tokens += len(tokens)
        if not self.enabled:
            return 0, None
        nodes = self._walk(tokens, len(tokens) - 1)
        if not nodes:
            return 0, None
        tick = next(self._clock)
        for node in nodes:
            node.last_used = tick
        hit = len(nodes) * self.block
        self.stats.hit_tokens += hit
        return hit, torch.cat([n.kv for n in nodes], dim=3)  # type: ignore[misc]

    def insert(self, tokens: list[int], kv: torch.Tensor, start: int, epoch: int) -> None:
        """Store the whole blocks of ``tokens`` whose KV is ``kv`` = ``tokens[start:]``'s.

        ``start`` is a multiple of ``block`` whose prefix is expected in the trie already (it
        was just looked up); if it was evicted meanwhile, nothing is stored. KV computed before
        the last ``clear`` (``epoch`` differs) is dropped.
        """
        if not self.enabled or epoch != self.epoch:
            return
        b = self.block
        if start % b:
            raise ValueError(f"insert start {start} is not a multiple of the block {b}")
        node = self._root
        for begin in range(0, start, b):
            node = node.children.get(tuple(tokens[begin : begin + b]))  # type: ignore[assignment]
            if node is None:
                return
        tick = next(self._clock)
        for begin in range(start, len(tokens) - b + 1, b):
            key = tuple(tokens[begin : begin + b])
            child = node.children.get(key)
            if child is None:
                piece = kv[:, :, :, begin - start : begin - start + b].clone()
                child = _Node(node, key, piece)
                node.children[key] = child
                self._bytes += piece.numel() * piece.element_size()
                self.stats.cached_tokens += b
            child.last_used = tick
            node = child
        self._evict()

    def clear(self) -> None:
        """Drop every entry (the weights changed) and refuse KV computed before now."""
        self._root = _Node(None, (), None)
        self._bytes = 0
        self.stats.cached_tokens = 0
        self.stats.flushes += 1
        self.epoch += 1

    def _evict(self) -> None:
        if self._bytes <= self.budget_bytes:
            return
        leaves: list[tuple[int, int, _Node]] = []
        order = itertools.count()
        stack = [self._root]
        while stack:
            node = stack.pop()
            stack.extend(node.children.values())
            if not node.children and node is not self._root:
                leaves.append((node.last_used, next(order), node))
        heapq.heapify(leaves)
        while self._bytes > self.budget_bytes and leaves:
            _, _, node = heapq.heappop(leaves)
            parent = node.parent
            assert parent is not None and node.kv is not None
            del parent.children[node.key]
            self._bytes -= node.kv.numel() * node.kv.element_size()
            self.stats.cached_tokens -= self.block
            self.stats.evicted_tokens += self.block
            if not parent.children and parent is not self._root:
                heapq.heappush(leaves, (parent.last_used, next(order), parent))
