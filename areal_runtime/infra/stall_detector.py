# SPDX-License-Identifier: Apache-2.0
"""Find blocking calls at run time: a heartbeat on the event loop, watched from another thread.

Every episode shares one event loop (as in AReaL), so one ``time.sleep`` or blocking ``open()``
in a workflow stalls every rollout. When the loop misses its heartbeat for longer than
``threshold_s``, the watcher thread captures the loop thread's stack and the asyncio task that
was running, and reports the frame in user code that blocked.
"""

from __future__ import annotations

import asyncio
import os
import site
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# pydantic's schema generation and model construction (validators are built on first use)
_PYDANTIC_BUILD = ("/pydantic/_internal/", "/pydantic/plugin/")
# Building a TLS context reads the CA bundle (30-300 ms): an SDK does it once for the client it
# keeps (the Agents SDK's tracing exporter, httpx's default transport).
_TLS_SETUP = ("create_default_context", "load_default_certs", "_create_default_https_context")
_SSL_MODULE = os.sep + "ssl.py"
_INTERNAL_DIRS = (
    os.path.dirname(asyncio.__file__),
    os.path.dirname(threading.__file__) + os.sep + "threading.py",
    os.path.dirname(os.path.dirname(__file__)) + os.sep + "infra",
)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# This distribution's packages: the runtime, and the devkit commands that drive it.
_RUNTIME_DIRS = tuple(
    os.path.join(_ROOT, name) + os.sep for name in ("areal_runtime", "areal_devkit")
)
_STDLIB_DIRS = tuple(
    {os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib")}
)
_LIBRARY_DIRS = tuple(
    {
        os.path.abspath(path) + os.sep
        for path in (
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
            *site.getsitepackages(),
        )
    }
)
# The executor's thread pool starting a worker: machinery, whoever asked for the thread.
_THREAD_START = ("concurrent" + os.sep + "futures" + os.sep + "thread.py", "_adjust_thread_count")
Owner = Literal["workflow", "runtime", "library"]


def frame_owner(filename: str) -> Owner | None:
    """Whose code a frame is: the runtime's, a library's, the workflow's; None for stdlib."""
    if filename.startswith("<"):  # <frozen ...>, or code compiled at run time (<string>)
        return None
    path = os.path.abspath(filename)
    if path.startswith(_RUNTIME_DIRS):
        return "runtime"
    if path.startswith(_LIBRARY_DIRS):  # first: a virtualenv's site-packages is inside its stdlib
        return "library"
    if path.startswith(_STDLIB_DIRS):
        return None
    return "workflow"


@dataclass
class StallReport:
    """One stall of the event loop: how long, in which episode, and where it blocked.

    ``seen_before`` is set by the detector when the same set-up at the same call site already
    stalled the loop in this run: then it is paid per episode (a client built per episode), not
    once, and it is the workflow's to fix.
    """

    duration_s: float
    task_name: str | None
    episode: str | None
    frames: list[traceback.FrameSummary] = field(default_factory=list)
    seen_before: bool = False

    @property
    def owner(self) -> Owner:
        """Who blocked the loop: the first non-stdlib frame from the innermost one decides.

        Workflow code, or a library it called, is the workflow's stall; the runtime's own code
        (an engine, the proxy, the executor starting a pool thread) is the runtime's. A
        library's first-use set-up (a first import, a pydantic schema, a TLS context) is the
        library's even when the workflow's call reached it: the workflow cannot avoid it.
        """
        for frame in reversed(self.frames):
            if frame.filename.endswith(_THREAD_START[0]) and frame.name == _THREAD_START[1]:
                return "runtime"
            owner = frame_owner(frame.filename)
            if owner == "runtime":
                return "runtime"
            if owner is not None:
                if self.workflow_frame is None:  # a library the runtime called is the runtime's
                    return "runtime" if self._runtime_called else "library"
                return "library" if self.one_time else "workflow"
        return "runtime"

    @property
    def _runtime_called(self) -> bool:
        return any(frame_owner(f.filename) == "runtime" for f in self.frames)

    @property
    def workflow_frame(self) -> traceback.FrameSummary | None:
        """The innermost frame in the user's own code (not stdlib, a library or the runtime)."""
        for frame in reversed(self.frames):
            if frame_owner(frame.filename) == "workflow":
                return frame
        return None

    @property
    def culprit(self) -> traceback.FrameSummary | None:
        """The user's line when there is one, else the innermost frame outside asyncio."""
        frame = self.workflow_frame if self.owner == "workflow" else None
        return frame or self.innermost

    @property
    def innermost(self) -> traceback.FrameSummary | None:
        for frame in reversed(self.frames):
            if not frame.filename.startswith(_INTERNAL_DIRS):
                return frame
        return self.frames[-1] if self.frames else None

    @property
    def library_frame(self) -> traceback.FrameSummary | None:
        """The innermost frame in an installed library (where a set-up happened)."""
        for frame in reversed(self.frames):
            if frame_owner(frame.filename) == "library":
                return frame
        return None

    @property
    def library_name(self) -> str | None:
        """The installed package the workflow's code (or the loop) called into first."""
        for frame in self.frames:
            if frame_owner(frame.filename) == "library":
                path = os.path.abspath(frame.filename)
                root = next(r for r in _LIBRARY_DIRS if path.startswith(r))
                return path[len(root) :].split(os.sep)[0].removesuffix(".py")
        return None

    @property
    def during_import(self) -> bool:
        """The loop was blocked by a first-time import (once per process, not per episode)."""
        return any(f.filename.startswith("<frozen importlib") for f in self.frames)

    @property
    def tls_setup(self) -> bool:
        """The loop was blocked building a TLS context (``ssl.create_default_context``)."""
        return any(f.filename.endswith(_SSL_MODULE) and f.name in _TLS_SETUP for f in self.frames)

    @property
    def setup(self) -> str | None:
        """Which one-time set-up blocked the loop, in words; None for an ordinary stall.

        Imports and pydantic schemas happen once per process (SDKs such as openai-agents build
        their pydantic models lazily, on the first run); a TLS context once per client a
        library keeps, unless the same site repeats (``seen_before``). A stall that repeats
        per episode has none of them in its stack.
        """
        if self.during_import:
            return "a first import"
        if any(
            any(part in f.filename.replace("\\", "/") for part in _PYDANTIC_BUILD)
            for f in self.frames
        ):
            return "pydantic building a model's schema on its first use"
        if self.tls_setup and not self.seen_before:
            return "TLS set-up on first use: ssl.create_default_context reads the CA bundle"
        return None

    @property
    def one_time(self) -> bool:
        """A library's first-use set-up: once per process, so a test reports none of them."""
        return self.setup is not None

    @property
    def is_workflows(self) -> bool:
        """Whether the workflow's code should change: its own stall, not a one-time cost."""
        return self.owner == "workflow" and not self.one_time

    @property
    def location(self) -> str:
        return _where(self.culprit)

    def format(self) -> str:
        took = f"event loop blocked for {self.duration_s * 1000:.0f} ms"
        if self.owner != "workflow":
            if self.owner == "runtime":
                whose = "the runtime"
            else:
                name = self.library_name
                whose = f"library code ({name})" if name else "library code"
            where = self.library_frame if self.one_time and self.library_frame else self.innermost
            text = f"{took} by {whose}, not by workflow code, at {_where(where)}"
            if self.one_time:
                text += f" ({self.setup}; once per process, nothing to change)"
            return text
        who = self.episode or self.task_name or "code outside any task"
        lines = [f"{took} by {who} at {self.location}"]
        frame = self.culprit
        if frame is not None and frame.line:
            lines.append(f"    {frame.line}")
        if self.innermost is not None and self.innermost is not frame:
            lines.append(f"    inside {_where(self.innermost)}")
        if self.tls_setup:
            lines.append(
                "    a TLS context is built here on every episode: build the client once (in "
                "__init__, or use the http_client the runtime passes) and reuse it"
            )
        else:
            lines.append(
                "    every episode shares this loop: make the call async (aiofiles, "
                "asyncio.sleep, httpx.AsyncClient) or move it off the loop with asyncio.to_thread"
            )
        return "\n".join(lines)


def _setup_site(report: StallReport) -> tuple[tuple[str, int], ...]:
    """Where a set-up was reached from: every non-stdlib frame (the same site twice repeats)."""
    return tuple(
        (f.filename, f.lineno or 0) for f in report.frames if frame_owner(f.filename) is not None
    )


def _where(frame: traceback.FrameSummary | None) -> str:
    return f"{frame.filename}:{frame.lineno} in {frame.name}" if frame else "<unknown>"


async def start_pool_threads(count: int) -> None:
    """Start ``count`` threads of the loop's default executor now, before episodes run.

    A thread starts on the first ``to_thread`` that finds none idle, and starting one under
    load can hold the loop for ~100 ms: that is the runtime's cost, not an episode's.
    """
    loop = asyncio.get_running_loop()
    # Every job waits until all are submitted, so each submission finds every thread busy and
    # starts one (up to the pool's size); the loop itself never waits on the gate.
    gate = threading.Event()
    waits = [loop.run_in_executor(None, gate.wait, 5.0) for _ in range(count)]
    gate.set()
    await asyncio.gather(*waits, return_exceptions=True)
    await asyncio.sleep(0.02)  # a thread marks itself idle just after its job's result is set


class LoopStallDetector:
    """Context manager (sync or async) that watches the running loop while active.

    ``describe_task(task)`` names the episode a task runs (the executor passes one);
    ``on_stall(report)`` is called from the watcher thread for each finished stall.
    """

    def __init__(
        self,
        threshold_s: float = 0.05,
        *,
        describe_task: Callable[[asyncio.Task], str | None] | None = None,
        on_stall: Callable[[StallReport], None] | None = None,
    ) -> None:
        if threshold_s <= 0:
            raise ValueError(f"threshold_s must be > 0, got {threshold_s}")
        self.threshold_s = threshold_s
        self.interval_s = min(threshold_s / 4, 0.02)
        self.describe_task = describe_task
        self.on_stall = on_stall
        self.stalls: list[StallReport] = []
        self._setup_sites: set[tuple[tuple[str, int], ...]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread_id: int | None = None
        self._last_beat = time.monotonic()
        self._handle: asyncio.TimerHandle | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> LoopStallDetector:
        """Start watching the running loop; call from inside it."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread_id = threading.get_ident()
        self._last_beat = time.monotonic()
        self._beat()
        self._stop.clear()
        self._watcher = threading.Thread(target=self._watch, name="areal-stall-watch", daemon=True)
        self._watcher.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None

    def __enter__(self) -> LoopStallDetector:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> LoopStallDetector:
        return self.start()

    async def __aexit__(self, *exc: Any) -> None:
        self.stop()

    def _beat(self) -> None:
        self._last_beat = time.monotonic()
        assert self._loop is not None
        self._handle = self._loop.call_later(self.interval_s, self._beat)

    def _watch(self) -> None:
        pending: StallReport | None = None
        stalled_since = 0.0
        while not self._stop.wait(self.interval_s):
            beat = self._last_beat
            lag = time.monotonic() - beat
            if pending is None and lag > self.threshold_s + self.interval_s:
                pending, stalled_since = self._capture(), beat
            elif pending is not None and beat != stalled_since:
                pending.duration_s = beat - stalled_since - self.interval_s
                self._record(pending)
                pending = None
        if pending is not None:
            pending.duration_s = time.monotonic() - stalled_since
            self._record(pending)

    def _capture(self) -> StallReport:
        frame = sys._current_frames().get(self._loop_thread_id)
        frames = list(traceback.extract_stack(frame)) if frame is not None else []
        task = asyncio.current_task(self._loop) if self._loop is not None else None
        episode = None
        if task is not None and self.describe_task is not None:
            episode = self.describe_task(task)
        return StallReport(
            duration_s=0.0,
            task_name=task.get_name() if task is not None else None,
            episode=episode,
            frames=frames,
        )

    def _record(self, report: StallReport) -> None:
        if report.tls_setup:
            site = _setup_site(report)
            report.seen_before = site in self._setup_sites
            self._setup_sites.add(site)
        self.stalls.append(report)
        if self.on_stall is not None:
            self.on_stall(report)
