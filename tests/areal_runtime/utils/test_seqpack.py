# SPDX-License-Identifier: Apache-2.0
"""Sequence packing: every index placed once, groups balanced, limits honoured.

(AReaL's own ``tests/test_seqpack.py`` imports its cluster controller, so it does not collect
against the runtime; these cover the same two functions.)
"""

from __future__ import annotations

import random

import pytest

from areal_runtime.utils.seqpack import balanced_greedy_partition, ffd_allocate


def test_partition_deals_equal_sized_groups_with_close_sums() -> None:
    rng = random.Random(0)
    lengths = [rng.randint(100, 2000) for _ in range(64)]
    groups = balanced_greedy_partition(lengths, 8)
    assert sorted(i for g in groups for i in g) == list(range(64))
    assert {len(g) for g in groups} == {8}
    sums = [sum(lengths[i] for i in g) for g in groups]
    assert (max(sums) - min(sums)) / (sum(sums) / 8) < 0.1
    assert balanced_greedy_partition(lengths, 8) == groups  # deterministic


def test_partition_splits_two_sizes_evenly() -> None:
    nums = [1000] * 4 + [1] * 4
    groups = balanced_greedy_partition(nums, 2)
    sums = [sum(nums[i] for i in g) for g in groups]
    assert sums == [2002, 2002]


@pytest.mark.parametrize(
    ("nums", "k", "message"), [([1, 2, 3], 5, "must be >= K"), ([1] * 5, 2, "divisible by K")]
)
def test_partition_refuses_impossible_splits(nums: list[int], k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        balanced_greedy_partition(nums, k)


def test_ffd_fits_the_capacity_with_few_groups() -> None:
    values = [100, 200, 300, 150, 250]
    groups = ffd_allocate(values, 500, min_groups=1)
    assert sorted(i for g in groups for i in g) == list(range(5))
    assert all(sum(values[i] for i in g) <= 500 for g in groups)
    assert len(groups) == 2  # 1000 tokens in groups of at most 500
    assert len(ffd_allocate([50] * 10, 1000, min_groups=4)) == 4


def test_ffd_honours_the_group_count_divisor() -> None:
    groups = ffd_allocate([400, 400, 400, 10, 10, 10], 500, min_groups=1, n_groups_divisor=2)
    assert len(groups) % 2 == 0 and len(groups) >= 3


def test_ffd_refuses_what_cannot_fit() -> None:
    with pytest.raises(RuntimeError, match="larger than capacity"):
        ffd_allocate([100, 600], 500, min_groups=1)
    with pytest.raises(RuntimeError, match="smaller than min_groups"):
        ffd_allocate([100, 200], 500, min_groups=5)
