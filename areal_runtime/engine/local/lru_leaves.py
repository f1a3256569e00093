# SPDX-License-Identifier: Apache-2.0
"""The prefix cache's evictable leaves, least recently used first, kept up to date as they change.

Collecting the leaves by walking the trie at every eviction costs time in proportion to all that
is cached. This set changes only where the trie does (a leaf released by its last request, a
leaf removed, a parent left without children), so an eviction costs a heap pop. A heap entry
goes stale when its node is locked again, grows a child or is used later; stale entries are
skipped when popped and dropped in bulk once they outnumber the live ones.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class LruLeaves(Generic[T]):
    """A set of items, each with the tick of its last use, that pops the oldest first."""

    def __init__(self) -> None:
        self._live: dict[T, int] = {}  # item -> the tick it was added with
        self._heap: list[tuple[int, int, T]] = []
        self._order = itertools.count()  # ties break by insertion, never by comparing items

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, item: object) -> bool:
        return item in self._live

    def add(self, item: T, last_used: int) -> None:
        """Add ``item`` (or move it to ``last_used`` if it is in the set already)."""
        if self._live.get(item) == last_used:
            return
        self._live[item] = last_used
        heapq.heappush(self._heap, (last_used, next(self._order), item))
        if len(self._heap) > 2 * len(self._live) + 64:
            self._compact()

    def discard(self, item: T) -> None:
        self._live.pop(item, None)

    def pop_oldest(self) -> T | None:
        """Remove and return the least recently used item, or None if the set is empty."""
        while self._heap:
            used, _, item = heapq.heappop(self._heap)
            if self._live.get(item) == used:
                del self._live[item]
                return item
        return None

    def clear(self) -> None:
        self._live.clear()
        self._heap.clear()

    def _compact(self) -> None:
        self._heap = [(used, next(self._order), item) for item, used in self._live.items()]
        heapq.heapify(self._heap)
