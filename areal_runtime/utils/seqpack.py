# SPDX-License-Identifier: Apache-2.0
"""Sequence packing at AReaL's path (``areal.utils.seqpack``): split sequences into groups of
balanced token counts.

Why: a trainer that splits a batch across workers (or into micro-batches under a token budget)
is as slow as its heaviest group. ``balanced_greedy_partition`` deals sequences into ``K``
equally sized groups with near-equal token sums (data-parallel dispatch);
``ffd_allocate`` packs them into as few groups as fit a token ``capacity`` (micro-batches).
Both return indices into the input, never the values. Pure Python: no numpy or numba needed.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def _descending(values: Sequence[float]) -> list[int]:
    """Indices of ``values`` from largest to smallest; ties keep input order (deterministic)."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


def balanced_greedy_partition(nums: Sequence[int], K: int) -> list[list[int]]:
    """``K`` groups of ``len(nums) // K`` indices each, with near-equal sums of ``nums``.

    Largest first, each item goes to the group with the smallest sum that still has room.
    ``len(nums)`` must be a multiple of ``K`` and at least ``K``.
    """
    n = len(nums)
    if n < K:
        raise ValueError(f"Number of items ({n}) must be >= K ({K}).")
    if n % K != 0:
        raise ValueError(f"The length of nums ({n}) must be divisible by K ({K}).")
    per_group = n // K
    groups: list[list[int]] = [[] for _ in range(K)]
    # (sum, group) of the groups with room; a full group leaves the heap.
    open_groups = [(0, g) for g in range(K)]
    for idx in _descending(nums):
        total, g = heapq.heappop(open_groups)
        groups[g].append(idx)
        if len(groups[g]) < per_group:
            heapq.heappush(open_groups, (total + nums[idx], g))
    return groups


def _first_fit_decreasing(values: Sequence[int], capacity: int, min_groups: int) -> list[list[int]]:
    """Largest first: open a group while fewer than ``min_groups`` exist or nothing fits; else
    put the value in the fullest group it fits in (best fit: fewer groups than the lightest)."""
    groups: list[list[int]] = []
    sums: list[int] = []
    for idx in _descending(values):
        value = values[idx]
        fitting = [g for g in range(len(groups)) if sums[g] + value <= capacity]
        if len(groups) < min_groups or not fitting:
            groups.append([idx])
            sums.append(value)
            continue
        g = min(fitting, key=lambda k: (-sums[k], k))
        groups[g].append(idx)
        sums[g] += value
    return groups


def ffd_allocate(
    values: Sequence[int], capacity: int, min_groups: int, n_groups_divisor: int = 1
) -> list[list[int]]:
    """Indices of ``values`` packed into groups whose sums are at most ``capacity``: at least
    ``min_groups`` groups, a multiple of ``n_groups_divisor`` of them, as few as that allows."""
    if min_groups is None or min_groups < n_groups_divisor:
        min_groups = n_groups_divisor
    if any(v > capacity for v in values):
        raise RuntimeError(f"Values {list(values)} is larger than capacity {capacity}")
    if len(values) < min_groups:
        raise RuntimeError(
            f"Number of values {len(values)} is smaller than min_groups {min_groups}"
        )
    while True:
        groups = _first_fit_decreasing(values, capacity, min_groups)
        if len(groups) % n_groups_divisor == 0:
            return groups
        # Too many groups for the divisor: ask for the next multiple and pack again.
        min_groups = (len(groups) // n_groups_divisor + 1) * n_groups_divisor
        if len(values) < min_groups:
            raise RuntimeError(
                f"Cannot allocate values {list(values)} that satisfies capacity {capacity}, "
                f"min_groups {min_groups} and n_groups_divisor {n_groups_divisor}."
            )


__all__ = ["balanced_greedy_partition", "ffd_allocate"]
