# SPDX-License-Identifier: Apache-2.0
"""In-memory stand-in for AReaL's ``stats_tracker``: ``get(scope).scalar(reward=...)``.

Values are kept so tests and the executor report can read what a workflow logged.
"""

from __future__ import annotations

import statistics
import threading
from collections import defaultdict


class StatsTracker:
    """Collects named scalar values logged by workflows under one scope."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._values: dict[str, list[float]] = defaultdict(list)

    def scalar(self, **values: float) -> None:
        with self._lock:
            for key, value in values.items():
                self._values[key].append(float(value))

    def values(self, key: str) -> list[float]:
        with self._lock:
            return list(self._values.get(key, []))

    def export(self, reset: bool = True) -> dict[str, float]:
        """Mean of every key, as ``"<scope>/<key>"``; clears the values unless ``reset=False``."""
        with self._lock:
            out = {
                f"{self.name}/{key}": statistics.fmean(vals)
                for key, vals in self._values.items()
                if vals
            }
            if reset:
                self._values.clear()
        return out


_trackers: dict[str, StatsTracker] = {}
_trackers_lock = threading.Lock()


def get(name: str = "") -> StatsTracker:
    """The tracker of scope ``name`` (AReaL's default scope is the empty name)."""
    with _trackers_lock:
        if name not in _trackers:
            _trackers[name] = StatsTracker(name)
        return _trackers[name]


def export_all(reset: bool = True) -> dict[str, float]:
    """Every scope's means (AReaL's ``stats_tracker.export_all``), e.g. ``rollout/reward``."""
    with _trackers_lock:
        trackers = list(_trackers.values())
    out: dict[str, float] = {}
    for tracker in trackers:
        out.update(tracker.export(reset=reset))
    return out


def reset_all() -> None:
    """Forget every scope; the pytest plugin calls this between tests."""
    with _trackers_lock:
        _trackers.clear()
