# SPDX-License-Identifier: Apache-2.0
"""No-op stand-ins for AReaL's perf tracer, so traced workflows port and run unchanged.

Each name keeps AReaL's shape: ``trace_session(phase)``, ``trace_perf(name)`` and
``session_context()`` are decorators that return the function itself (an ``async def`` stays a
coroutine function); ``atrace_session_phase`` / ``atrace_scope`` are used with ``async with``
and ``trace_session_phase`` / ``trace_scope`` with ``with``. Nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class PerfTraceCategory(StrEnum):
    """AReaL's trace categories, accepted by ``trace_perf``/``trace_scope`` and ignored."""

    COMPUTE = "compute"
    COMM = "comm"
    IO = "io"
    SYNC = "sync"
    SCHEDULER = "scheduler"
    INSTR = "instr"
    MISC = "misc"


Category = PerfTraceCategory


class _NoopScope:
    """One object that is a sync and an async context manager and a decorator."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_exc: object) -> None:
        return None

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_exc: object) -> None:
        return None

    def __call__(self, fn: F) -> F:
        return fn


_NOOP = _NoopScope()


# Each function takes AReaL's parameters (a call that AReaL refuses is refused here too) and
# returns the shared no-op scope.


def trace_session(phase: str) -> _NoopScope:
    """Decorator for a session phase (``@trace_session("reward")``)."""
    return _NOOP


def session_context() -> _NoopScope:
    """Decorator that opens a session per call (``@session_context()``)."""
    return _NOOP


def trace_perf(name: str, *, category: Any = None) -> _NoopScope:
    """Decorator that times a function."""
    return _NOOP


def trace_session_phase(
    phase: str,
    *,
    start_payload: dict[str, Any] | None = None,
    end_payload: dict[str, Any] | None = None,
) -> _NoopScope:
    """``with trace_session_phase("generate"):``."""
    return _NOOP


def atrace_session_phase(
    phase: str,
    *,
    start_payload: dict[str, Any] | None = None,
    end_payload: dict[str, Any] | None = None,
) -> _NoopScope:
    """``async with atrace_session_phase("generate"):``."""
    return _NOOP


def trace_scope(
    name: str,
    *,
    category: Any = None,
    enable_profiler: bool = False,
    profiler_args: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
) -> _NoopScope:
    """``with trace_scope("name"):``."""
    return _NOOP


def atrace_scope(
    name: str,
    *,
    category: Any = None,
    enable_profiler: bool = False,
    profiler_args: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
) -> _NoopScope:
    """``async with atrace_scope("name"):``."""
    return _NOOP


def trace_session_event(
    method: str, session_id: int | None = None, task_id: int | None = None, **payload: Any
) -> None:
    """Accepted and ignored: the runtime has no trace sink."""


def instant(name: str, *, category: Any = None, args: dict[str, Any] | None = None) -> None:
    """Accepted and ignored."""


def save(*, step: int | None = None, force: bool = False) -> None:
    """Accepted and ignored."""


def is_configured() -> bool:
    return False


# Per task (contextvars) as in AReaL, so concurrent episodes never see each other's ids.
_task_id: ContextVar[int | None] = ContextVar("areal_runtime_perf_task_id", default=None)
_session_id: ContextVar[int | None] = ContextVar("areal_runtime_perf_session_id", default=None)


def set_task_id(task_id: int | None) -> None:
    _task_id.set(task_id)


def get_task_id() -> int | None:
    return _task_id.get()


def set_session_id(session_id: int | None) -> None:
    _session_id.set(session_id)


def get_session_id() -> int | None:
    return _session_id.get()
