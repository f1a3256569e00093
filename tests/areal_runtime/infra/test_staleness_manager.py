# SPDX-License-Identifier: Apache-2.0
"""The staleness window after a recovered run (AReaL's ``on_version_recovered``).

AReaL's 1.0.4 tests do not cover it (its fix came after the release, inclusionAI/AReaL#1345);
CI runs the release's ``tests/test_staleness_manager.py`` for the rest.
"""

from __future__ import annotations

import pytest

from areal_runtime.infra.staleness_manager import StalenessManager


class _Version:
    def __init__(self, version: int) -> None:
        self.version = version

    def get_version(self) -> int:
        return self.version


def _manager(version: _Version) -> StalenessManager:
    return StalenessManager(
        version, max_concurrent_rollouts=1000, consumer_batch_size=16, max_staleness=2
    )


@pytest.mark.parametrize("recovered", [0, 5, 50])
def test_a_recovered_run_may_start_one_window_not_one_per_past_version(recovered):
    version = _Version(0)
    manager = _manager(version)
    version.version = recovered
    manager.on_version_recovered(recovered)
    assert manager.get_capacity() == (2 + 1) * 16


def test_rollouts_running_at_recovery_still_count_and_the_window_moves_on():
    version = _Version(0)
    manager = _manager(version)
    for _ in range(5):
        manager.on_rollout_enqueued()
        manager.on_rollout_submitted()
    version.version = 10
    manager.on_version_recovered(10)
    assert manager.get_capacity() == 3 * 16 - 5
    assert manager.get_stats().running == 5
    version.version = 11  # one more update: one more batch may start
    assert manager.get_capacity() == 4 * 16 - 5
