# SPDX-License-Identifier: Apache-2.0
"""No-op stand-ins for AReaL's perf tracer, so decorated workflows run unchanged."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any


def set_task_id(task_id: int | None) -> None:
    """Accepted and ignored: the runtime has no trace sink."""


@contextlib.contextmanager
def session_context(*_args: Any, **_kwargs: Any) -> Iterator[None]:
    yield


@contextlib.asynccontextmanager
async def atrace_scope(*_args: Any, **_kwargs: Any):  # type: ignore[no-untyped-def]
    yield


def _identity_decorator(*_args: Any, **_kwargs: Any) -> Callable[[Callable], Callable]:
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    return decorate


trace_session = _identity_decorator
atrace_session_phase = _identity_decorator
trace_perf = _identity_decorator
trace_session_event = _identity_decorator
