# SPDX-License-Identifier: Apache-2.0
"""``AsyncRewardWrapper``: run a synchronous reward function without blocking the event loop.

Same constructor and call as AReaL's wrapper, with the weaknesses that stall or mislead a
rollout fixed:

* a call that times out does not keep a worker: the worker process is killed and replaced, and
  the timeout clock starts when a worker picks the call up, not while it waits in the queue;
* an exception raised by the reward function is not retried: it raises
  :class:`RewardFunctionError` naming the function (or returns ``fallback`` when one is given);
* a timeout raises :class:`RewardTimeoutError` unless ``fallback`` is given; either way it is
  counted in ``wrapper.stats`` so a trainer can tell "wrong" from "timed out";
* a function that cannot be pickled is refused at construction, not after retries;
* pools are shared and outlive wrappers, so wrappers created per episode cause no pool churn;
  a worker that dies (``os._exit``, SIGKILL) is replaced and the call retried.

``mode="thread"`` and ``mode="inline"`` run the function in a thread or directly, for tests and
for functions that cannot be pickled. :func:`use_reward_mode` changes the default mode, so a
workflow that builds ``AsyncRewardWrapper(fn)`` in ``__init__`` can run its reward inline in tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import os
import pickle
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Any, Literal

from areal_runtime.errors import RewardError, RewardFunctionError, RewardTimeoutError
from areal_runtime.utils.process_pool import (
    Job,
    WorkerCrashedError,
    WorkerPool,
    WorkerTimedOutError,
    shared_pool,
)

logger = logging.getLogger("areal_runtime.reward")

RewardMode = Literal["process", "thread", "inline"]
_MODES = ("process", "thread", "inline")
_default_mode: list[RewardMode] = ["process"]
_default_mode_lock = threading.Lock()


@dataclass
class RewardStats:
    """Counters a trainer can log to tell wrong answers from timeouts and failures."""

    calls: int = 0
    successes: int = 0
    timeouts: int = 0
    errors: int = 0
    fallbacks: int = 0
    retries: int = 0
    worker_restarts: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


GLOBAL_STATS = RewardStats()
"""Totals over every wrapper in this process (the rollout report reads the timeouts)."""


def default_max_workers() -> int:
    """One worker per core, capped at 8; AReaL's CPU fallback gives 1 worker on 16 cores."""
    return max(1, min(8, os.cpu_count() or 1))


@contextlib.contextmanager
def use_reward_mode(mode: RewardMode) -> Iterator[None]:
    """Make wrappers constructed inside the block default to ``mode``."""
    if mode not in _MODES:
        raise ValueError(f"unknown reward mode {mode!r}; use one of {_MODES}")
    with _default_mode_lock:
        _default_mode.append(mode)
    try:
        yield
    finally:
        with _default_mode_lock:
            _default_mode.remove(mode)


def _function_name(fn: Callable[..., Any]) -> str:
    target = fn.func if isinstance(fn, functools.partial) else fn
    module = getattr(target, "__module__", None) or "?"
    return f"{module}.{getattr(target, '__qualname__', repr(target))}"


def _to_float(value: Any, name: str) -> float:
    if isinstance(value, str | bytes) or value is None:
        raise RewardFunctionError(
            f"reward function {name} returned {value!r} ({type(value).__name__}); "
            "it must return a number (float, int, bool or a numpy scalar)"
        )
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise RewardFunctionError(
            f"reward function {name} returned {type(value).__name__} {value!r}, which is not a "
            "number; return a float"
        ) from exc


class AsyncRewardWrapper:
    """Await a synchronous reward function with a timeout, in a process pool by default."""

    def __init__(
        self,
        reward_fn: Callable[..., Any],
        timeout_seconds: float = 15,
        max_workers: int | None = None,
        max_retries: int = 3,
        *,
        mode: RewardMode | None = None,
        fallback: float | None = None,
    ) -> None:
        if not callable(reward_fn):
            raise TypeError(f"reward_fn must be callable, got {type(reward_fn).__name__}")
        if asyncio.iscoroutinefunction(reward_fn):
            raise TypeError(
                f"reward function {_function_name(reward_fn)} is an async def; "
                "AsyncRewardWrapper runs synchronous functions: await it directly instead"
            )
        if timeout_seconds is not None and timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0, got {timeout_seconds}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.reward_fn = reward_fn
        self.name = _function_name(reward_fn)
        self.timeout_seconds = timeout_seconds
        self.max_workers = max_workers or default_max_workers()
        self.max_retries = max_retries
        self.mode: RewardMode = mode or _default_mode[-1]
        if self.mode not in _MODES:
            raise ValueError(f"unknown reward mode {self.mode!r}; use one of {_MODES}")
        self.fallback = None if fallback is None else float(fallback)
        self.stats = RewardStats()
        self._signature = _signature_or_none(reward_fn)
        self._pool: WorkerPool | None = None
        self._threads: ThreadPoolExecutor | None = None
        if self.mode == "process":
            try:
                self._fn_bytes = pickle.dumps(reward_fn)
            except Exception as exc:
                raise TypeError(
                    f"reward function {self.name} cannot be pickled for the process pool "
                    f"({type(exc).__name__}: {exc}); define it at module level (lambdas and "
                    "nested functions cannot be pickled), or pass mode='thread'"
                ) from exc
            _check_importable(reward_fn, self.name)
            self._pool = shared_pool(self.max_workers)
        elif self.mode == "thread":
            self._threads = _shared_threads(self.max_workers)

    def __repr__(self) -> str:
        return (
            f"AsyncRewardWrapper({self.name}, mode={self.mode!r}, timeout={self.timeout_seconds})"
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the configuration, not the pools: an agent that holds a wrapper can be sent
        to a worker process (``agent_mode="subproc"``), which attaches to its own pools."""
        state = self.__dict__.copy()
        state["_pool"] = state["_threads"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.mode == "process":
            self._pool = shared_pool(self.max_workers)
        elif self.mode == "thread":
            self._threads = _shared_threads(self.max_workers)

    async def __call__(self, *args: Any, **kwargs: Any) -> float:
        self._count("calls")
        try:
            self._check_call(args, kwargs)
            if self.mode == "process":
                value = await self._call_in_process(args, kwargs)
            elif self.mode == "thread":
                value = await self._call_in_thread(args, kwargs)
            else:
                value = self._call_inline(args, kwargs)
            result = _to_float(value, self.name)
        except RewardTimeoutError as exc:
            self._count("timeouts")
            return self._fallback_or_raise(exc)
        except RewardError as exc:
            self._count("errors")
            return self._fallback_or_raise(exc)
        self._count("successes")
        return result

    def _check_call(self, args: tuple, kwargs: dict) -> None:
        """Name a call that cannot match the signature before it crosses to a worker.

        AReaL's RLVR workflows call ``reward_fn(prompt, completions, prompt_ids,
        completion_ids, **data)`` and agents ``reward_fn(completions=..., **data)``; a function
        written for one and called the other way is the usual mistake, so both are named.
        """
        if self._signature is None:
            return
        try:
            self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            given = [f"<{len(args)} positional>"] if args else []
            given += [f"{key}=" for key in kwargs]
            raise RewardFunctionError(
                f"reward function {self.name}{self._signature} cannot be called with "
                f"({', '.join(given)}): {exc}. RLVR workflows call reward_fn(prompt, "
                "completions, prompt_ids, completion_ids, **data); agents call "
                "reward_fn(completions=..., **data): give the function the parameters its "
                "caller passes (and **kwargs for the rest)"
            ) from None

    def _count(self, name: str, n: int = 1) -> None:
        setattr(self.stats, name, getattr(self.stats, name) + n)
        setattr(GLOBAL_STATS, name, getattr(GLOBAL_STATS, name) + n)

    def _fallback_or_raise(self, exc: RewardError) -> float:
        if self.fallback is None:
            raise exc
        self._count("fallbacks")
        logger.warning("reward %s failed; returning fallback %s", self.name, self.fallback)
        return self.fallback

    def _call_inline(self, args: tuple, kwargs: dict) -> Any:
        try:
            return self.reward_fn(*args, **kwargs)
        except Exception as exc:
            raise RewardFunctionError(
                f"reward function {self.name} raised {type(exc).__name__}: {exc}"
            ) from exc

    async def _call_in_thread(self, args: tuple, kwargs: dict) -> Any:
        loop = asyncio.get_running_loop()
        assert self._threads is not None
        future = loop.run_in_executor(
            self._threads, functools.partial(self._call_inline, args, kwargs)
        )
        try:
            return await asyncio.wait_for(future, self.timeout_seconds)
        except TimeoutError:
            raise RewardTimeoutError(
                f"reward function {self.name} did not finish within {self.timeout_seconds}s "
                "(thread mode cannot stop it: the thread runs on in the background)"
            ) from None

    async def _call_in_process(self, args: tuple, kwargs: dict) -> Any:
        try:
            payload = pickle.dumps((args, kwargs))
        except Exception as exc:
            raise RewardFunctionError(
                f"the arguments for reward function {self.name} cannot be pickled "
                f"({type(exc).__name__}: {exc}); pass plain data (str, numbers, lists, dicts)"
            ) from exc
        assert self._pool is not None
        for attempt in range(self.max_retries + 1):
            job = Job(
                fn_bytes=self._fn_bytes,
                payload=payload,
                timeout_s=self.timeout_seconds,
            )
            try:
                ok, value = await self._pool.run(job)
            except WorkerTimedOutError:
                self._count("worker_restarts")
                raise RewardTimeoutError(
                    f"reward function {self.name} did not finish within "
                    f"{self.timeout_seconds}s; its worker was killed and replaced"
                ) from None
            except WorkerCrashedError as exc:
                self._count("worker_restarts")
                if attempt == self.max_retries:
                    raise RewardFunctionError(
                        f"the worker running reward function {self.name} died {attempt + 1} "
                        f"time(s) ({exc}); does the function call os._exit or crash?"
                    ) from None
                self._count("retries")
                logger.warning("reward worker died (%s); retrying %s", exc, self.name)
                continue
            if ok:
                return value
            raise RewardFunctionError(f"reward function {self.name} raised {value}")
        raise AssertionError("unreachable")


def _signature_or_none(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins and C functions have none
        return None


def _check_importable(fn: Callable[..., Any], name: str) -> None:
    """Worker processes import the function by module path; ``__main__`` is not theirs."""
    target = fn.func if isinstance(fn, functools.partial) else fn
    if getattr(target, "__module__", None) == "__main__":
        raise TypeError(
            f"reward function {name} is defined in the __main__ script, which worker processes "
            "cannot import; move it to a module, or pass mode='thread'"
        )


_thread_pools: dict[int, ThreadPoolExecutor] = {}
_thread_pools_lock = threading.Lock()


def _shared_threads(max_workers: int) -> ThreadPoolExecutor:
    with _thread_pools_lock:
        pool = _thread_pools.get(max_workers)
        if pool is None:
            pool = _thread_pools[max_workers] = ThreadPoolExecutor(
                max_workers, thread_name_prefix="areal-reward"
            )
        return pool
