# SPDX-License-Identifier: Apache-2.0
"""A prefix cache for the local engine: the KV of token prefixes already computed, reused.

Agents re-send their whole history every turn and every episode of a group re-sends the same
system prompt and tool schemas, so most prompt tokens were computed before. Like SGLang's radix
cache and vLLM's automatic prefix caching, this keeps their KV and hands it to later requests.

The cache is a trie of fixed-size token blocks (vLLM's pages): node ``n`` holds the keys and
values of its ``block`` tokens, computed after every token on the path above it, as one tensor
``[layers, 2, kv_heads, block, head_dim]``. Only whole blocks are shared, so a hit is a multiple
of ``block`` tokens. The engine speaks to it per request, and all block arithmetic stays here:

* ``match`` finds the cached prefix of a prompt and locks its path, so it stays while the
  request runs (SGLang's lock references);
* ``insert`` stores the request's new whole blocks below its hit (the prompt after prefill, the
  prompt and answer when it finishes), reading their KV through a callback only when needed;
* ``release`` unlocks the path once the request is done.

An ``extra_key`` splits the trie (vLLM puts the same in its block hashes): prompts with equal
tokens but different images share nothing. Past ``budget_bytes`` the least recently used
unlocked leaves go first, taken from a set kept as the trie changes (``lru_leaves.py``); a
node's parent is never evicted before it. ``new_weights`` starts a new epoch: everything cached
is dropped and KV computed before it is never inserted.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

import torch

from areal_runtime.engine.local.lru_leaves import LruLeaves

# The KV of ``tokens[begin:end]`` as ``[layers, 2, kv_heads, end - begin, head_dim]``, or None
# when the caller cannot give it (the cache then stores nothing).
KVReader = Callable[[int, int], torch.Tensor | None]


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
    __slots__ = ("children", "key", "kv", "last_used", "locks", "parent")

    def __init__(self, parent: _Node | None, key: Hashable, kv: torch.Tensor | None) -> None:
        self.children: dict[Hashable, _Node] = {}
        self.parent = parent
        self.key = key  # a block's tokens; a root's is its extra key
        self.kv = kv
        self.last_used = 0
        self.locks = 0  # requests whose hit path runs through this node


@dataclass(eq=False)
class CacheHit:
    """One request's hold on the cache, from ``match`` to ``release``.

    ``tokens`` leading prompt tokens were reused; ``kv`` is their KV (a copy), handed over once
    with ``take_kv``. The hold moves down as the request's own blocks are inserted.
    """

    tokens: int
    kv: torch.Tensor | None
    extra_key: Hashable
    epoch: int
    _node: _Node | None = field(default=None, repr=False)  # the deepest node held
    _depth: int = 0  # tokens from the root to ``_node``
    released: bool = False

    def take_kv(self) -> torch.Tensor | None:
        """The reused KV, once: the hit is kept for the request's life, its copy of KV is not."""
        kv, self.kv = self.kv, None
        return kv


def images_key(images: Iterable[str] | None) -> str | None:
    """An extra key for a request's images (base64 strings): None without images."""
    images = list(images or [])
    if not images:
        return None
    digest = hashlib.sha256()
    for image in images:
        digest.update(len(image).to_bytes(8, "little"))
        digest.update(image.encode())
    return digest.hexdigest()


class PrefixCache:
    """Block trie of KV tensors bounded by ``budget_bytes`` with LRU eviction of free leaves.

    The engine's worker thread calls the verbs; ``new_weights`` may come from any thread (a
    lock makes each verb atomic with respect to it).
    """

    def __init__(self, budget_bytes: int, block: int = 16) -> None:
        if block < 1:
            raise ValueError(f"the prefix cache block must be >= 1 token, got {block}")
        if budget_bytes < 0:
            raise ValueError(f"the prefix cache budget must be >= 0 bytes, got {budget_bytes}")
        self._budget = budget_bytes
        self.block = block
        self.stats = PrefixCacheStats()
        self._epoch = 0
        self._roots: dict[Hashable, _Node] = {}
        self._leaves: LruLeaves[_Node] = LruLeaves()
        self._bytes = 0
        self._clock = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._budget > 0

    @property
    def budget_bytes(self) -> int:
        return self._budget

    @property
    def nbytes(self) -> int:
        return self._bytes

    @property
    def epoch(self) -> int:
        """Bumped by ``new_weights``: a hit from an older epoch inserts nothing."""
        return self._epoch

    def reusable(self, tokens: list[int], extra_key: Hashable = None) -> int:
        """How many leading tokens of a prompt ``match`` would reuse (no stats, no hold).

        At least one token is always left to compute: its logits give the first output token.
        """
        with self._lock:
            if not self.enabled:
                return 0
            return len(self._walk(tokens, extra_key, len(tokens) - 1)) * self.block

    def match(self, tokens: list[int], extra_key: Hashable = None) -> CacheHit:
        """The cached prefix of a prompt, its path locked until ``release``."""
        with self._lock:
            self.stats.requests += 1
            self.stats.prompt_tokens += len(tokens)
            nodes = self._walk(tokens, extra_key, len(tokens) - 1) if self.enabled else []
            hit = len(nodes) * self.block
            if not nodes:
                return CacheHit(0, None, extra_key, self._epoch)
            tick = next(self._clock)
            for node in nodes:
                node.last_used = tick
            self._hold(nodes[-1])
            self.stats.hit_tokens += hit
            kv = torch.cat([n.kv for n in nodes], dim=3)  # type: ignore[misc]
            return CacheHit(hit, kv, extra_key, self._epoch, nodes[-1], hit)

    def insert(
        self,
        tokens: list[int],
        kv: torch.Tensor | KVReader,
        extra_key: Hashable = None,
        *,
        hit: CacheHit | None = None,
    ) -> int:
        """Store the whole blocks of ``tokens`` the trie lacks; returns the tokens stored.

        ``kv`` is the KV of all of ``tokens`` (``[L, 2, H, len(tokens), D]``) or a reader
        called once for the span to store. With ``hit``, ``tokens`` continue that request's
        prompt: the walk starts at its hold, which then moves down to the last block stored,
        and nothing is stored if new weights came since its ``match``.
        """
        read = kv if callable(kv) else _slicer(kv)
        with self._lock:
            if not self.enabled:
                return 0
            if hit is None:
                start, depth = self._root(extra_key), 0
            else:
                if hit.released or hit.epoch != self._epoch:
                    return 0
                if extra_key is not None and extra_key != hit.extra_key:
                    raise ValueError("insert's extra_key differs from its hit's")
                start, depth = hit._node or self._root(hit.extra_key), hit._depth
                if depth and tuple(tokens[depth - self.block : depth]) != start.key:
                    raise ValueError("insert's tokens do not continue its hit's prefix")
            end, end_depth, stored = self._grow(start, depth, tokens, read)
            if start.parent is None and not start.children:
                self._roots.pop(start.key, None)  # nothing stored under a new extra key
            if hit is not None and end is not start:
                self._hold(end)
                if hit._node is not None:
                    self._free(hit._node)
                hit._node, hit._depth = end, end_depth
            self._evict()
            return stored

    def release(self, hit: CacheHit | None) -> None:
        """The request is done: its path may be evicted again (twice is harmless)."""
        if hit is None or hit.released:
            return
        with self._lock:
            hit.released = True
            if hit.epoch == self._epoch and hit._depth:
                self._free(hit._node)
                self._evict()

    def shares_new_blocks(
        self, tokens: list[int], reused: int, others: Iterable[list[int]]
    ) -> bool:
        """Whether a prompt that reuses ``reused`` tokens would compute a whole block that one
        of ``others`` (prompts of the same extra key, about to be prefilled) computes too: it
        had better wait a turn and reuse that block."""
        if not self.enabled or len(tokens) - 1 - reused < self.block:
            return False
        return any(_common_prefix(tokens, other) - reused >= self.block for other in others)

    def new_weights(self) -> None:
        """Drop every entry and refuse KV computed before now (the weights changed)."""
        with self._lock:
            self._drop_all()
            self.stats.flushes += 1

    def disable(self) -> None:
        """Stop caching for good (the model's own cache keeps no plain per-token KV)."""
        with self._lock:
            self._budget = 0
            self._drop_all()

    def _drop_all(self) -> None:
        self._roots = {}
        self._leaves.clear()
        self._bytes = 0
        self.stats.cached_tokens = 0
        self._epoch += 1

    def _root(self, extra_key: Hashable) -> _Node:
        root = self._roots.get(extra_key)
        if root is None:
            root = self._roots[extra_key] = _Node(None, extra_key, None)
        return root

    def _walk(self, tokens: list[int], extra_key: Hashable, most: int) -> list[_Node]:
        """Nodes matching ``tokens`` from the start, at most ``most`` tokens' worth."""
        nodes: list[_Node] = []
        node = self._roots.get(extra_key)
        b = self.block
        if node is None:
            return nodes
        for start in range(0, most - most % b, b):
            child = node.children.get(tuple(tokens[start : start + b]))
            if child is None:
                break
            nodes.append(child)
            node = child
        return nodes

    def _grow(
        self, node: _Node, depth: int, tokens: list[int], read: KVReader
    ) -> tuple[_Node, int, int]:
        """Follow ``tokens``' whole blocks below ``node`` (``depth`` tokens deep), adding the
        missing ones; returns the last node, its depth and the tokens added."""
        b = self.block
        whole = len(tokens) // b * b
        tick = next(self._clock)
        above = node
        while above.parent is not None:
            above.last_used = tick
            above = above.parent
        while depth < whole:
            child = node.children.get(tuple(tokens[depth : depth + b]))
            if child is None:
                break
            child.last_used = tick
            node, depth = child, depth + b
        added = 0
        kv = read(depth, whole) if depth < whole else None
        if kv is not None:
            if kv.shape[3] != whole - depth:
                raise ValueError(f"the KV read holds {kv.shape[3]} tokens, not {whole - depth}")
            self._leaves.discard(node)  # it gets a child
            for begin in range(0, whole - depth, b):
                piece = kv[:, :, :, begin : begin + b].clone()
                key = tuple(tokens[depth + begin : depth + begin + b])
                child = node.children[key] = _Node(node, key, piece)
                child.last_used = tick
                self._bytes += piece.numel() * piece.element_size()
                node = child
            added, depth = whole - depth, whole
            self.stats.cached_tokens += added
        self._refresh(node)
        return node, depth, added

    def _hold(self, node: _Node) -> None:
        """Lock ``node`` and its ancestors: none of them may be evicted."""
        n: _Node | None = node
        while n is not None and n.parent is not None:
            n.locks += 1
            if n.locks == 1:
                self._leaves.discard(n)
            n = n.parent

    def _free(self, node: _Node) -> None:
        n: _Node | None = node
        while n is not None and n.parent is not None:
            n.locks -= 1
            if n.locks == 0:
                self._refresh(n)
            n = n.parent

    def _refresh(self, node: _Node) -> None:
        """Put ``node`` in the evictable set if it is an unlocked leaf, else take it out."""
        if node.parent is None:
            return
        if node.children or node.locks:
            self._leaves.discard(node)
        else:
            self._leaves.add(node, node.last_used)

    def _evict(self) -> None:
        while self._bytes > self._budget:
            node = self._leaves.pop_oldest()
            if node is None:
                return  # every leaf left is held by a running request
            parent = node.parent
            assert parent is not None and node.kv is not None
            del parent.children[node.key]
            self._bytes -= node.kv.numel() * node.kv.element_size()
            self.stats.cached_tokens -= self.block
            self.stats.evicted_tokens += self.block
            if parent.parent is not None:
                self._refresh(parent)
            elif not parent.children and self._roots.get(parent.key) is parent:
                del self._roots[parent.key]  # an extra key with nothing left


def _slicer(kv: torch.Tensor) -> KVReader:
    return lambda begin, end: kv[:, :, :, begin:end]


def _common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the common prefix of two token lists (list slices compare in C)."""
    n = min(len(a), len(b))
    step = 256
    i = 0
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i
