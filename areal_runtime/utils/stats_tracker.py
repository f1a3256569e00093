# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``stats_tracker``: scoped scalars, denominators and masked per-token statistics.

Workflows log ``get(scope).scalar(reward=...)``; the actor's loss logs per-token values with
``stat(..., denominator=...)`` against bool masks registered with ``denominator(...)``, inside
``scope("ppo_actor")`` blocks. ``export()`` reduces them as AReaL does: ``KEY/avg``,
``KEY/min`` and ``KEY/max`` over the tokens of the denominator, denominators as counts, and
scalars as their mean plus ``KEY__count``. One process, so the ``reduce_group`` arguments
are accepted and ignored, and torch is imported only once a tensor statistic is exported.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum, auto
from typing import Any


class ReduceType(Enum):
    """How a key's recorded values become exported numbers."""

    AVG_MIN_MAX = auto()
    AVG = auto()
    SUM = auto()
    MIN = auto()
    MAX = auto()
    SCALAR = auto()


def _is_tensor(value: Any) -> bool:
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


class DistributedStatsTracker:
    """Statistics under a stack of scopes (``ppo_actor/update/...``), reduced on ``export``."""

    def __init__(self, name: str = "") -> None:
        self.lock = threading.RLock()
        self.scope_stack: list[str] = [name.strip("/")] if name else []
        self.denominators: dict[str, str] = {}  # key -> its denominator's key
        self.reduce_types: dict[str, ReduceType] = {}
        self.stats: defaultdict[str, list[Any]] = defaultdict(list)

    @property
    def name(self) -> str:
        return "/".join(self.scope_stack)

    class Scope:
        """Pushes ``name`` on the tracker's scope stack for the ``with`` block."""

        def __init__(self, tracker: DistributedStatsTracker, name: str) -> None:
            self.tracker = tracker
            self.name = name.strip("/")

        def __enter__(self) -> DistributedStatsTracker.Scope:
            self.tracker.scope_stack.append(self.name)
            return self

        def __exit__(self, *exc: object) -> None:
            self.tracker.scope_stack.pop()

    def scope(self, name: str) -> DistributedStatsTracker.Scope:
        return self.Scope(self, name)

    def scope_func_wrapper(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: run the function inside ``scope(name)``."""

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                with self.scope(name):
                    return func(*args, **kwargs)

            return wrapper

        return decorator

    def _get_full_key(self, key: str) -> str:
        return "/".join([*self.scope_stack, key])

    @contextmanager
    def disable_scope(self) -> Iterator[None]:
        saved, self.scope_stack = self.scope_stack, []
        try:
            yield
        finally:
            self.scope_stack = saved

    @contextmanager
    def record_timing(self, key: str) -> Iterator[None]:
        """Seconds spent in the block, as the scalar ``timeperf/KEY`` (scopes do not apply)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                full_key = f"timeperf/{key}"
                self.reduce_types[full_key] = ReduceType.SCALAR
                self.stats[full_key].append(time.perf_counter() - start)

    def denominator(self, **kwargs: Any) -> None:
        """Register bool masks that ``stat`` values are averaged over (exported as counts)."""
        import torch

        with self.lock:
            for key, value in kwargs.items():
                if not isinstance(value, torch.Tensor) or value.dtype != torch.bool:
                    raise ValueError(
                        f"`{key}` must be a pytorch bool tensor: {getattr(value, 'dtype', value)}"
                    )
                if value.numel() == 0:
                    raise ValueError(f"`{key}` must be non-empty")
                full_key = self._get_full_key(key)
                self.reduce_types[full_key] = ReduceType.SUM
                self.stats[full_key].append(value.detach().clone())

    def scalar(self, **kwargs: float) -> None:
        """Record plain numbers; exported as their mean (and how many were recorded)."""
        with self.lock:
            for key, value in kwargs.items():
                full_key = self._get_full_key(key)
                self.reduce_types[full_key] = ReduceType.SCALAR
                self.stats[full_key].append(float(value))

    def stat(self, denominator: str, reduce_type: ReduceType | None = None, **kwargs: Any) -> None:
        """Record float tensors shaped like the latest ``denominator`` mask of this scope."""
        import torch

        with self.lock:
            for key, value in kwargs.items():
                if not isinstance(value, torch.Tensor) or value.dtype != torch.float:
                    raise ValueError(
                        f"`{key}` should be a pytorch float tensor: "
                        f"{getattr(value, 'dtype', value)}"
                    )
                if value.numel() == 0:
                    raise ValueError(f"`{key}` should be non-empty")
                if reduce_type is ReduceType.SCALAR:
                    raise ValueError("Cannot use the scalar reduce type for a tensor")
                full_key = self._get_full_key(key)
                denom = self._get_full_key(denominator)
                if not self.stats.get(denom):
                    raise ValueError(f"Denominator `{denom}` does not exist")
                masks = self.stats[denom]
                recorded = [*self.stats[full_key], value]
                for mask, x in zip(masks, recorded, strict=False):
                    if mask.shape != x.shape:
                        raise ValueError(
                            f"`{full_key}` has shape {tuple(x.shape)} but its denominator "
                            f"`{denom}` has {tuple(mask.shape)}"
                        )
                self.denominators[full_key] = denom
                self.reduce_types[full_key] = reduce_type or ReduceType.AVG_MIN_MAX
                self.stats[full_key].append(value.detach().clone())

    def values(self, key: str) -> list[Any]:
        """What was recorded under ``key`` in the current scope (for tests and reports)."""
        with self.lock:
            return list(self.stats.get(self._get_full_key(key), []))

    def export(
        self, key: str | None = None, reduce_group: Any = None, reset: bool = True
    ) -> dict[str, float]:
        """The reduced statistics (of ``key`` only, when given); clears them unless ``reset=False``."""
        with self.lock:
            keys = [self._get_full_key(key)] if key is not None else list(self.stats)
            out: dict[str, float] = {}
            for k in keys:
                if k in self.stats:
                    out.update(self._aggregate(k))
            if reset:
                if key is None:
                    self.stats = defaultdict(list)
                    self.denominators = {}
                    self.reduce_types = {}
                else:
                    for k in keys:
                        self.stats.pop(k, None)
                        self.denominators.pop(k, None)
                        self.reduce_types.pop(k, None)
            return out

    def _aggregate(self, key: str) -> dict[str, float]:
        kind = self.reduce_types.get(key, ReduceType.SCALAR)
        values = self.stats[key]
        if kind is ReduceType.SCALAR:
            if not values:
                return {}
            return {key: sum(values) / len(values), f"{key}__count": len(values)}
        if kind is ReduceType.SUM and key not in self.denominators:
            return {key: float(sum(float(v.sum()) for v in values))}
        masks = self.stats.get(self.denominators[key], [])
        pairs = list(zip(values, masks, strict=False))
        picked = [v[m] for v, m in pairs]
        n = sum(int(m.sum()) for _, m in pairs)
        total = sum(float(p.double().sum()) for p in picked)
        low = min((float(p.min()) for p in picked if p.numel()), default=None)
        high = max((float(p.max()) for p in picked if p.numel()), default=None)
        avg = total / n if n else None
        if kind is ReduceType.AVG_MIN_MAX:
            out = {f"{key}/avg": avg, f"{key}/min": low, f"{key}/max": high}
        else:
            value = {
                ReduceType.AVG: avg,
                ReduceType.SUM: total,
                ReduceType.MIN: low,
                ReduceType.MAX: high,
            }[kind]
            out = {key: value}
        return {k: v for k, v in out.items() if v is not None}


DEFAULT_TRACKER = DistributedStatsTracker()
stat = DEFAULT_TRACKER.stat
denominator = DEFAULT_TRACKER.denominator
export = DEFAULT_TRACKER.export
scope = DEFAULT_TRACKER.scope
scalar = DEFAULT_TRACKER.scalar
record_timing = DEFAULT_TRACKER.record_timing
scope_func_wrapper = DEFAULT_TRACKER.scope_func_wrapper

TRACKERS: dict[str, DistributedStatsTracker] = {"": DEFAULT_TRACKER}
_TRACKERS_LOCK = threading.Lock()


def get(name: str = "") -> DistributedStatsTracker:
    """The tracker of scope ``name`` (the default tracker for the empty name)."""
    with _TRACKERS_LOCK:
        if name not in TRACKERS:
            TRACKERS[name] = DistributedStatsTracker(name)
        return TRACKERS[name]


def export_all(reduce_group: Any = None, reset: bool = True) -> dict[str, float]:
    """Every tracker's statistics (AReaL's ``export_all``), e.g. ``rollout/reward``."""
    with _TRACKERS_LOCK:
        trackers = list(TRACKERS.values())
    out: dict[str, float] = {}
    for tracker in trackers:
        out.update(tracker.export(reset=reset))
    return out


def reset_all() -> None:
    """Forget every recorded value (tests call this between cases)."""
    with _TRACKERS_LOCK:
        for name in [n for n in TRACKERS if n]:
            del TRACKERS[name]
        DEFAULT_TRACKER.export(reset=True)
