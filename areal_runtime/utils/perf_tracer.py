# SPDX-License-Identifier: Apache-2.0
"""AReaL's perf tracer (``areal.utils.perf_tracer``): timed scopes as Chrome trace events, and
per-session lifecycle records.

Why a real tracer: AReaL's workflows are decorated with ``trace_session`` / ``session_context`` /
``trace_perf``, and its users read the resulting files in Perfetto (``chrome://tracing``). With
``perf_tracer.configure(PerfTracerConfig(enabled=True, ...), rank=0)``:

- ``trace_scope`` / ``atrace_scope`` / ``trace_perf`` record complete (``"ph": "X"``) events,
  ``instant`` records instant events; ``save()`` appends them, one JSON event per line, to
  ``{fileroot}/logs/{user}/{experiment}/{trial}/perf_tracer[/{role}]/traces-r{rank}.jsonl``
  (every ``save_interval`` steps, or on ``force``).
- With ``session_tracer.enabled`` each rollout session (``register_session``) becomes one record
  (status, submit/finalize times, generate/reward/toolcall phase spans and their totals) in
  ``.../session_tracer[/{role}]/sessions-r{rank}.jsonl``, flushed once ``flush_threshold``
  sessions are finished.
- A scope with ``enable_profiler=True`` whose ``global_step`` is in ``profile_steps`` runs
  ``torch.profiler`` and merges its trace in (torch is imported only then).

Unconfigured (the default), every helper is a cheap no-op, so traced workflows run unchanged.
"""

from __future__ import annotations

import atexit
import functools
import getpass
import importlib
import inspect
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from areal_runtime.utils.lazy_module import LazyModule

logger = logging.getLogger("areal_runtime.perf_tracer")

F = TypeVar("F", bound=Callable[..., Any])


# torch.profiler, imported only when a profiled step runs.
profiler: Any = LazyModule("torch.profiler")


class PerfTraceCategory(StrEnum):
    """Event categories (the ``cat`` field Perfetto filters on)."""

    COMPUTE = "compute"
    COMM = "comm"
    IO = "io"
    SYNC = "sync"
    SCHEDULER = "scheduler"
    INSTR = "instr"
    MISC = "misc"


Category = PerfTraceCategory
CategoryLike = PerfTraceCategory | str | None

# Long spellings AReaL accepts for its categories.
_CATEGORY_NAMES = {c.value: c.value for c in PerfTraceCategory} | {
    "communication": "comm",
    "synchronization": "sync",
    "scheduling": "scheduler",
    "instrumentation": "instr",
}


def _category(category: CategoryLike) -> str:
    """A category's ``cat`` string; a custom string is kept as given, None is ``misc``."""
    if isinstance(category, PerfTraceCategory):
        return category.value
    if isinstance(category, str) and category.strip():
        return _CATEGORY_NAMES.get(category.strip().lower(), category)
    return PerfTraceCategory.MISC.value


class SessionTraceEvent(StrEnum):
    """Lifecycle events of one rollout session."""

    FINALIZED = "finalized"
    GENERATE_START = "generate_start"
    GENERATE_END = "generate_end"
    REWARD_START = "reward_start"
    REWARD_END = "reward_end"
    TOOLCALL_START = "toolcall_start"
    TOOLCALL_END = "toolcall_end"


# Phases a session record times: (phase, start event, end event).
_PHASES = ("generate", "reward", "toolcall")
_PHASE_OF_EVENT: dict[SessionTraceEvent, tuple[str, str]] = {
    SessionTraceEvent(f"{phase}_{edge}"): (phase, edge)
    for phase in _PHASES
    for edge in ("start", "end")
}
_TERMINAL_STATUSES = frozenset({"rejected", "failed", "dropped"})


def _trace_path(config: Any, *, rank: int, role: str | None, subdir: str, stem: str) -> str:
    """``{fileroot}/logs/{user}/{experiment}/{trial}/{subdir}[/{role}]/{stem}-r{rank}.jsonl``."""
    parts = [
        os.path.expanduser(os.path.expandvars(config.fileroot)),
        "logs",
        getpass.getuser(),
        config.experiment_name,
        config.trial_name,
        subdir,
    ]
    if role:
        parts.append(role)
    return os.path.join(*parts, f"{stem}-r{rank}.jsonl")


def _append_lines(path: str, items: list[dict[str, Any]]) -> None:
    """Append one JSON object per line and fsync (a trace must survive the process dying)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.writelines(json.dumps(item, ensure_ascii=False, default=str) + "\n" for item in items)
        out.flush()
        os.fsync(out.fileno())


class _NullContext:
    """What every scope returns when tracing is off: a sync and async no-op context."""

    def __enter__(self) -> _NullContext:
        return self

    def __exit__(self, *_exc: object) -> bool:
        return False

    async def __aenter__(self) -> _NullContext:
        return self

    async def __aexit__(self, *_exc: object) -> bool:
        return False


_NULL = _NullContext()

# --- sessions --------------------------------------------------------------------------------


@dataclass
class PhaseSpan:
    """One run of a phase; ``end_ts`` is None while it runs (wall-clock seconds)."""

    start_ts: float
    end_ts: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"start_ts": self.start_ts, "end_ts": self.end_ts}


@dataclass
class SessionRecord:
    """One session's lifecycle; ``to_dict`` is the line written to ``sessions-r{rank}.jsonl``."""

    task_id: int
    session_id: int
    rank: int
    role: str | None
    submit_ts: float
    status: str = "pending"
    reason: str | None = None
    finalized_ts: float | None = None
    phases: dict[str, list[PhaseSpan]] = field(default_factory=lambda: {p: [] for p in _PHASES})
    counters: dict[str, int] = field(default_factory=dict)

    def is_ready_to_flush(self) -> bool:
        """Finished: failed/rejected/dropped, or accepted and handed to the trainer."""
        return self.status in _TERMINAL_STATUSES or (
            self.status == "accepted" and self.finalized_ts is not None
        )

    def phase_event(self, phase: str, edge: str, now: float) -> None:
        """Open a span on ``start``; close the open one on ``end`` (an unmatched end is a
        zero-length span, so a lost start never hides the phase)."""
        spans = self.phases.setdefault(phase, [])
        if edge == "start":
            spans.append(PhaseSpan(start_ts=now))
            return
        open_span = next((s for s in reversed(spans) if s.end_ts is None), None)
        if open_span is None:
            open_span = PhaseSpan(start_ts=now)
            spans.append(open_span)
        open_span.end_ts = now

    def phase_seconds(self, phase: str) -> float | None:
        done = [s.end_ts - s.start_ts for s in self.phases.get(phase, []) if s.end_ts is not None]
        return sum(done) if done else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "task_id": self.task_id,
            "session_id": self.session_id,
            "rank": self.rank,
            "role": self.role,
            "status": self.status,
            "reason": self.reason,
            "submit_ts": self.submit_ts,
            "finalized_ts": self.finalized_ts,
            "total_s": None if self.finalized_ts is None else self.finalized_ts - self.submit_ts,
        }
        for phase in _PHASES:
            data[f"{phase}_s"] = self.phase_seconds(phase)
        data = {k: v for k, v in data.items() if v is not None}
        spans = {p: [s.to_dict() for s in ss] for p, ss in self.phases.items() if ss}
        if spans:
            data["phases"] = spans
        counters = {k: v for k, v in self.counters.items() if v}
        if counters:
            data["counters"] = counters
        return data


class SessionTracer:
    """Session records of one process; thread-safe (episodes run on several threads)."""

    def __init__(
        self, config: Any, *, output_path: str, rank: int, role: str | None = None
    ) -> None:
        self._config = config
        self._output_path = output_path
        self._rank = rank
        self._role = role
        self._lock = threading.Lock()
        self._next_session_id = 0
        self._task_sessions: dict[int, set[int]] = {}
        self._records: dict[int, SessionRecord] = {}
        self._ready: set[int] = set()
        self._flush_threshold = self._threshold(config)

    @staticmethod
    def _threshold(config: Any) -> int:
        try:
            return max(int(config.flush_threshold), 1)
        except (TypeError, ValueError):
            logger.warning("invalid session_tracer.flush_threshold %r; using 1", config)
            return 1

    def register_task(self, task_id: int) -> None:
        """A dataset row's task; its sessions (one per sample) are registered under it."""
        with self._lock:
            self._task_sessions.setdefault(task_id, set())

    def register_session(self, task_id: int) -> int:
        """A new session of ``task_id``; returns its id."""
        now = time.time()
        with self._lock:
            session_id = self._next_session_id
            self._next_session_id += 1
            self._records[session_id] = SessionRecord(
                task_id=task_id,
                session_id=session_id,
                rank=self._rank,
                role=self._role,
                submit_ts=now,
            )
            self._task_sessions.setdefault(task_id, set()).add(session_id)
        return session_id

    def get_session_ids(self, task_id: int) -> list[int]:
        with self._lock:
            return sorted(self._task_sessions.get(task_id, ()))

    def record_event(self, session_id: int, event: SessionTraceEvent, **payload: Any) -> None:
        """Apply ``event`` to the session; flush once enough sessions are finished."""
        event = SessionTraceEvent(event)
        now = time.time()
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                return
            if event is SessionTraceEvent.FINALIZED:
                record.finalized_ts = now
                if payload.get("status") is not None:
                    record.status = payload["status"]
                if "reason" in payload:
                    record.reason = payload["reason"]
                self._ready.add(session_id)
            else:
                phase, edge = _PHASE_OF_EVENT[event]
                record.phase_event(phase, edge, now)
                if record.is_ready_to_flush():
                    self._ready.add(session_id)
            should_flush = len(self._ready) >= self._flush_threshold
        if should_flush:
            self.flush()

    def increment_counter(self, session_id: int, name: str, value: int = 1) -> None:
        with self._lock:
            record = self._records.get(session_id)
            if record is not None:
                record.counters[name] = record.counters.get(name, 0) + value

    def flush(self, force: bool = False) -> None:
        """Write the finished sessions (every session with ``force``) and forget them."""
        with self._lock:
            ids = list(self._records) if force else sorted(self._ready)
            taken = [(i, self._records.pop(i)) for i in ids if i in self._records]
            self._ready.difference_update(ids)
        if not taken:
            return
        try:
            _append_lines(self._output_path, [record.to_dict() for _, record in taken])
        except OSError as exc:
            logger.error("cannot append session trace to %s: %s", self._output_path, exc)
            with self._lock:  # kept for the next flush
                for session_id, record in taken:
                    self._records[session_id] = record
                    self._ready.add(session_id)

    def reset(self) -> None:
        self.flush(force=True)
        with self._lock:
            self._records.clear()
            self._ready.clear()
            self._task_sessions.clear()
            self._next_session_id = 0


# --- perf events ------------------------------------------------------------------------------

# Per task (contextvars), so concurrent episodes never see each other's ids.
_task_id: ContextVar[int | None] = ContextVar("areal_runtime_perf_task_id", default=None)
_session_id: ContextVar[int | None] = ContextVar("areal_runtime_perf_session_id", default=None)
_global_step: ContextVar[int | None] = ContextVar("areal_runtime_perf_global_step", default=None)
_profiling: ContextVar[bool] = ContextVar("areal_runtime_perf_profiling", default=False)


class _Scope:
    """A timed scope: one complete event on exit (sync and async), optionally profiled."""

    def __init__(
        self,
        tracer: PerfTracer,
        name: str,
        category: str,
        args: dict[str, Any] | None,
        profile_kwargs: dict[str, Any] | None,
    ) -> None:
        self._tracer = tracer
        self._name = name
        self._category = category
        self._args = args
        self._profile_kwargs = profile_kwargs
        self._profiler: Any = None
        self._tokens: list[tuple[ContextVar[Any], Token[Any]]] = []
        self._start_ns = 0

    def __enter__(self) -> _Scope:
        step = (self._args or {}).get("global_step")
        if step is not None:
            self._tokens.append((_global_step, _global_step.set(step)))
        if self._profile_kwargs is not None:
            activities = [profiler.ProfilerActivity.CPU]
            cuda = importlib.import_module("torch").cuda
            if cuda.is_available():
                activities.append(profiler.ProfilerActivity.CUDA)
            self._profiler = profiler.profile(activities=activities, **self._profile_kwargs)
            self._tokens.append((_profiling, _profiling.set(True)))
            self._profiler.__enter__()
        self._start_ns = time.perf_counter_ns()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        end_ns = time.perf_counter_ns()
        if self._profiler is not None:
            self._profiler.__exit__(exc_type, exc, tb)
            self._tracer.merge_profiler_trace(_export_chrome_trace(self._profiler), self._start_ns)
        for var, token in reversed(self._tokens):
            var.reset(token)
        self._tokens.clear()
        args = dict(self._args or {})
        if exc_type is not None:
            args.setdefault("exception", exc_type.__name__)
        self._tracer._record_complete(
            self._name, self._start_ns, end_ns - self._start_ns, self._category, args
        )
        return False

    async def __aenter__(self) -> _Scope:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        return self.__exit__(exc_type, exc, tb)


def _export_chrome_trace(prof: Any) -> dict[str, Any]:
    """The profiler's Chrome trace as a dict (it only exports to a file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


class PerfTracer:
    """Chrome trace events of one process (rank), buffered until ``save``."""

    def __init__(self, config: Any, *, rank: int, role: str | None = None) -> None:
        if rank < 0:
            raise ValueError("rank must be a non-negative integer")
        self._config = config
        self._enabled = bool(config.enabled)
        self._rank = rank
        self._role = role
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []
        self._origin_ns = time.perf_counter_ns()
        self._thread_meta_emitted: set[int] = set()
        self._process_meta_emitted: set[int] = set()
        self._virtual_tids: dict[tuple[int, int], int] = {}
        self._output_path = _trace_path(
            config, rank=rank, role=role, subdir="perf_tracer", stem="traces"
        )
        self._save_interval = max(int(getattr(config, "save_interval", 1) or 1), 1)
        self._profile_steps = frozenset(int(s) for s in (config.profile_steps or ()))
        self._session_tracer: SessionTracer | None = None
        session_config = getattr(config, "session_tracer", None)
        if session_config is not None and getattr(session_config, "enabled", False):
            self._session_tracer = SessionTracer(
                session_config,
                output_path=_trace_path(
                    config, rank=rank, role=role, subdir="session_tracer", stem="sessions"
                ),
                rank=rank,
                role=role,
            )

    @property
    def enabled(self) -> bool:
        return self._enabled

    def set_enabled(self, flag: bool) -> None:
        self._enabled = flag

    @property
    def session_tracer(self) -> SessionTracer | None:
        return self._session_tracer

    # -- recording ---------------------------------------------------------------------------
    def trace_scope(
        self,
        name: str,
        *,
        category: CategoryLike = None,
        enable_profiler: bool = False,
        profiler_args: dict[str, Any] | None = None,
        args: dict[str, Any] | None = None,
    ) -> Any:
        """``with tracer.trace_scope("step"):`` records the block's duration."""
        if not self._enabled:
            return _NULL
        profile_kwargs = None
        if enable_profiler and not _profiling.get() and self._profile_steps:
            step = (args or {}).get("global_step", _global_step.get())
            if step is not None and step in self._profile_steps:
                profile_kwargs = {"record_shapes": False, "with_stack": False}
                profile_kwargs.update(profiler_args or {})
        return _Scope(self, name, _category(category), args, profile_kwargs)

    # One scope object serves ``with`` and ``async with``.
    atrace_scope = trace_scope

    def instant(
        self, name: str, *, category: CategoryLike = None, args: dict[str, Any] | None = None
    ) -> None:
        """A point-in-time marker."""
        if not self._enabled:
            return
        self._record(
            {
                "name": name,
                "ph": "i",
                "s": "t",
                "ts": self._relative_us(time.perf_counter_ns()),
                "tid": threading.get_native_id(),
                "cat": _category(category),
                "args": dict(args or {}),
            }
        )

    def merge_profiler_trace(
        self, profiler_traces: dict[str, Any], base_time_ns: int, **_: Any
    ) -> None:
        """Add a torch profiler trace, shifted to this tracer's clock, on this process's row.

        The profiler's own threads and GPU streams get negative thread ids so they never
        collide with real ones; its metadata rows are replaced by one name per thread.
        """
        if not self._enabled:
            return
        events = [e for e in profiler_traces.get("traceEvents", []) if isinstance(e, dict)]
        stamps = [e["ts"] for e in events if "ts" in e]
        if not stamps:
            return
        shift_us = (base_time_ns - self._origin_ns) / 1000.0 - min(stamps)
        stream_names = {
            (e.get("pid"), e.get("tid")): str(e.get("args", {}).get("name", ""))
            for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"
        }
        merged: list[dict[str, Any]] = []
        with self._lock:
            for event in events:
                if event.get("ph") == "M":
                    continue
                try:
                    key = (int(event.get("pid", -1)), int(event.get("tid", -1)))
                except (TypeError, ValueError):
                    continue  # the profiler's "Spans"/"Traces" pseudo-processes
                if key[0] < 0:
                    continue
                if key not in self._virtual_tids:
                    tid = self._virtual_tids[key] = -1 - len(self._virtual_tids)
                    label = stream_names.get((event.get("pid"), event.get("tid")), "")
                    words = label.lower().split()
                    thread = (
                        f"[Profiler Stream {words[1]}]"
                        if len(words) >= 2 and words[0] == "stream" and words[1].isdigit()
                        else f"[Profiler Thread {key[1]}]"
                    )
                    merged.append(
                        {
                            "name": "thread_name",
                            "ph": "M",
                            "pid": self._pid,
                            "tid": tid,
                            "args": {"name": thread, "rank": self._rank},
                        }
                    )
                copy = dict(event, pid=self._pid, tid=self._virtual_tids[key])
                if "ts" in copy:
                    copy["ts"] = copy["ts"] + shift_us
                copy["args"] = dict(copy.get("args") or {}, rank=self._rank)
                if self._role is not None:
                    copy["args"]["role"] = self._role
                merged.append(copy)
            self._events.extend(merged)

    def _record_complete(
        self, name: str, start_ns: int, duration_ns: int, category: str, args: dict[str, Any]
    ) -> None:
        if not self._enabled:
            return
        self._record(
            {
                "name": name,
                "ph": "X",
                "ts": self._relative_us(start_ns),
                # Viewers drop complete events of 0 µs; keep sub-microsecond scopes visible.
                "dur": max(duration_ns // 1000, 1),
                "tid": threading.get_native_id(),
                "cat": category,
                "args": args,
            }
        )

    def _record(self, event: dict[str, Any]) -> None:
        pid, tid = self._pid, event["tid"]
        event["pid"] = pid
        event["args"].setdefault("rank", self._rank)
        if self._role is not None:
            event["args"].setdefault("role", self._role)
        with self._lock:
            if pid not in self._process_meta_emitted:
                self._process_meta_emitted.add(pid)
                label = f"Rank {self._rank}, Process"
                if self._role is not None:
                    label = f"[{self._role}] {label}"
                self._events.append(
                    {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": label}}
                )
                self._events.append(
                    {
                        "name": "process_sort_index",
                        "ph": "M",
                        "pid": pid,
                        "args": {"sort_index": self._rank},
                    }
                )
            if tid not in self._thread_meta_emitted:
                self._thread_meta_emitted.add(tid)
                self._events.append(
                    {
                        "name": "thread_name",
                        "ph": "M",
                        "pid": pid,
                        "tid": tid,
                        "args": {"name": threading.current_thread().name},
                    }
                )
            self._events.append(event)

    def _relative_us(self, ns: int) -> int:
        return max((ns - self._origin_ns) // 1000, 0)

    # -- persistence -------------------------------------------------------------------------
    def save(self, *, step: int | None = None, force: bool = False) -> None:
        """Append the buffered events to the trace file: on the last step of every
        ``save_interval`` steps (0-based ``step``), with no step, or with ``force``."""
        if force and self._session_tracer is not None:
            self._session_tracer.flush(force=True)
        if not self._enabled:
            return
        if not force and step is not None and (step + 1) % self._save_interval != 0:
            return
        with self._lock:
            events, self._events = self._events, []
        if not events:
            return
        try:
            _append_lines(self._output_path, events)
        except OSError as exc:
            logger.error("cannot append perf trace to %s: %s", self._output_path, exc)
            with self._lock:
                self._events[:0] = events

    def reset(self) -> None:
        """Drop buffered events (sessions are flushed first) and restart the clock."""
        if self._session_tracer is not None:
            self._session_tracer.reset()
        with self._lock:
            self._events = []
            self._thread_meta_emitted = set()
            self._process_meta_emitted = set()
            self._origin_ns = time.perf_counter_ns()
            self._enabled = bool(self._config.enabled)


# --- the process's tracer --------------------------------------------------------------------

GLOBAL_TRACER: PerfTracer | None = None
_GLOBAL_LOCK = threading.Lock()


@atexit.register
def _save_at_exit() -> None:
    tracer = GLOBAL_TRACER
    if tracer is not None:
        try:
            tracer.save(force=True)
        except Exception:  # exit must not fail on a trace
            logger.exception("could not save the perf trace at exit")


def configure(config: Any, *, rank: int, role: str | None = None) -> PerfTracer:
    """Install the process's tracer; a second call without ``reset()`` is an error."""
    global GLOBAL_TRACER
    with _GLOBAL_LOCK:
        if GLOBAL_TRACER is not None:
            raise RuntimeError(
                "PerfTracer has already been configured. Call perf_tracer.reset() "
                "before configuring again."
            )
        GLOBAL_TRACER = PerfTracer(config, rank=rank, role=role)
        return GLOBAL_TRACER


def is_configured() -> bool:
    return GLOBAL_TRACER is not None


def reset() -> None:
    """Forget the process's tracer (its sessions are flushed) so ``configure`` may run again."""
    global GLOBAL_TRACER
    with _GLOBAL_LOCK:
        tracer, GLOBAL_TRACER = GLOBAL_TRACER, None
    if tracer is not None:
        tracer.reset()


def get_tracer() -> PerfTracer:
    tracer = GLOBAL_TRACER
    if tracer is None:
        raise RuntimeError("PerfTracer is not configured. Call perf_tracer.configure(...) first.")
    return tracer


def get_session_tracer() -> SessionTracer | None:
    tracer = GLOBAL_TRACER
    return None if tracer is None else tracer.session_tracer


def trace_scope(
    name: str,
    *,
    category: CategoryLike = None,
    enable_profiler: bool = False,
    profiler_args: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
) -> Any:
    """``with trace_scope("name"):`` on the process's tracer; a no-op when unconfigured."""
    tracer = GLOBAL_TRACER
    if tracer is None:
        return _NULL
    return tracer.trace_scope(
        name,
        category=category,
        enable_profiler=enable_profiler,
        profiler_args=profiler_args,
        args=args,
    )


def atrace_scope(
    name: str,
    *,
    category: CategoryLike = None,
    enable_profiler: bool = False,
    profiler_args: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
) -> Any:
    """``async with atrace_scope("name"):``."""
    return trace_scope(
        name,
        category=category,
        enable_profiler=enable_profiler,
        profiler_args=profiler_args,
        args=args,
    )


def instant(
    name: str, *, category: CategoryLike = None, args: dict[str, Any] | None = None
) -> None:
    tracer = GLOBAL_TRACER
    if tracer is not None:
        tracer.instant(name, category=category, args=args)


def save(*, step: int | None = None, force: bool = False) -> None:
    tracer = GLOBAL_TRACER
    if tracer is not None:
        tracer.save(step=step, force=force)


def _wrap(func: F, scope: Callable[[], Any], before: Callable[[], None] | None = None) -> F:
    """``func`` run inside ``scope()`` (a fresh one per call); an ``async def`` stays one."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            if before is not None:
                before()
            async with scope():
                return await func(*args, **kwargs)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(func)
    def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            before()
        with scope():
            return func(*args, **kwargs)

    return sync_wrapper  # type: ignore[return-value]


def trace_perf(name: str, *, category: CategoryLike = None) -> Callable[[F], F]:
    """Decorator: each call of the function is a ``trace_scope(name)``."""
    return lambda func: _wrap(func, lambda: trace_scope(name, category=category))


# --- session helpers -------------------------------------------------------------------------


def set_task_id(task_id: int | None) -> None:
    _task_id.set(task_id)


def get_task_id() -> int | None:
    return _task_id.get()


def set_session_id(session_id: int | None) -> None:
    _session_id.set(session_id)


def get_session_id() -> int | None:
    return _session_id.get()


def register_task(task_id: int) -> None:
    tracer = get_session_tracer()
    if tracer is not None:
        tracer.register_task(task_id)


def register_session(task_id: int) -> int | None:
    tracer = get_session_tracer()
    return None if tracer is None else tracer.register_session(task_id)


_EVENT_OF_METHOD = {f"mark_{event.value}": event for event in SessionTraceEvent}


def trace_session_event(
    method: str, session_id: int | None = None, task_id: int | None = None, **payload: Any
) -> None:
    """Record ``mark_<event>`` (or ``increment_counter`` with ``name``/``value``) for one
    session, or for every session of ``task_id``; ignored when session tracing is off."""
    tracer = get_session_tracer()
    if tracer is None:
        return
    if session_id is not None:
        ids = [session_id]
    elif task_id is not None:
        ids = tracer.get_session_ids(task_id)
    else:
        return
    if method == "increment_counter":
        if payload.get("name"):
            for sid in ids:
                tracer.increment_counter(sid, payload["name"], payload.get("value", 1))
        return
    event = _EVENT_OF_METHOD.get(method)
    if event is not None:
        for sid in ids:
            tracer.record_event(sid, event, **payload)


class _SessionPhase:
    """``mark_{phase}_start`` on entry, ``mark_{phase}_end`` on exit (also on an exception)."""

    def __init__(
        self,
        session_id: int,
        phase: str,
        start_payload: dict[str, Any] | None,
        end_payload: dict[str, Any] | None,
    ) -> None:
        self._session_id = session_id
        self._phase = phase
        self._start_payload = start_payload or {}
        self._end_payload = end_payload or {}

    def __enter__(self) -> _SessionPhase:
        trace_session_event(
            f"mark_{self._phase}_start", session_id=self._session_id, **self._start_payload
        )
        return self

    def __exit__(self, *_exc: object) -> bool:
        trace_session_event(
            f"mark_{self._phase}_end", session_id=self._session_id, **self._end_payload
        )
        return False

    async def __aenter__(self) -> _SessionPhase:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> bool:
        return self.__exit__(*exc)


def trace_session_phase(
    phase: str,
    *,
    start_payload: dict[str, Any] | None = None,
    end_payload: dict[str, Any] | None = None,
) -> Any:
    """``with trace_session_phase("generate"):`` times a phase of the current session."""
    session_id = get_session_id()
    if session_id is None:
        return _NULL
    return _SessionPhase(session_id, phase, start_payload, end_payload)


def atrace_session_phase(
    phase: str,
    *,
    start_payload: dict[str, Any] | None = None,
    end_payload: dict[str, Any] | None = None,
) -> Any:
    """``async with atrace_session_phase("generate"):``."""
    return trace_session_phase(phase, start_payload=start_payload, end_payload=end_payload)


def _open_session() -> None:
    task_id = get_task_id()
    set_session_id(None if task_id is None else register_session(task_id))


def session_context() -> Callable[[F], F]:
    """Decorator: each call opens a session of the current task (``set_task_id``)."""
    return lambda func: _wrap(func, lambda: _NULL, before=_open_session)


def trace_session(phase: str) -> Callable[[F], F]:
    """Decorator: each call is the ``phase`` of the current session."""
    return lambda func: _wrap(func, lambda: trace_session_phase(phase))


__all__ = [
    "GLOBAL_TRACER",
    "Category",
    "PerfTraceCategory",
    "PerfTracer",
    "SessionTraceEvent",
    "SessionTracer",
    "atrace_scope",
    "atrace_session_phase",
    "configure",
    "get_session_id",
    "get_session_tracer",
    "get_task_id",
    "get_tracer",
    "instant",
    "register_session",
    "register_task",
    "reset",
    "save",
    "session_context",
    "set_session_id",
    "set_task_id",
    "trace_perf",
    "trace_scope",
    "trace_session",
    "trace_session_event",
    "trace_session_phase",
]
