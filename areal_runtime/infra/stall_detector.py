# SPDX-License-Identifier: Apache-2.0
"""Find blocking calls at run time: every callback the event loop runs is timed.

Every episode shares one event loop (as in AReaL), so one ``time.sleep`` or blocking ``open()``
in a workflow stalls every rollout. The detector wraps the loop's callback runner (as asyncio's
debug mode does for ``slow_callback_duration``), so each callback that runs longer than
``threshold_s`` is one stall, charged to the task that ran it: eight episodes blocking back to
back are eight stalls, each on its own episode. A watcher thread samples the loop thread's stack
throughout a long callback, and reads how long the loop thread was on a CPU and how long it
waited for one (``thread_clock``), so ``stall_report`` can say whose stall it was: the
workflow's, a library's one-time set-up, the runtime's, or a busy machine's.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from areal_runtime.infra.blocked_socket import break_off, loopback_peer_served
from areal_runtime.infra.stall_report import (
    _LIBRARY_DIRS,  # noqa: F401  (tests build library paths from it)
    StackSample,
    StallReport,
    frame_owner,  # noqa: F401  (re-exported: the report's notion of whose code a frame is)
    setup_site,
)
from areal_runtime.infra.thread_clock import ThreadClock

logger = logging.getLogger("areal_runtime.stall")

__all__ = ["LoopStallDetector", "StackSample", "StallReport", "start_pool_threads"]

_original_run = asyncio.events.Handle._run
# The detectors watching each loop, outermost first; the wrapper below is installed while any is.
_WATCHED: dict[asyncio.AbstractEventLoop, list[LoopStallDetector]] = {}
_said_wall_only = False
# Loop threads watched, and how long Python's collector has run on each (start, total).
_GC_CLOCKS: dict[int, list[float | None]] = {}


def _gc_timer(phase: str, _info: dict) -> None:
    clock = _GC_CLOCKS.get(threading.get_ident())
    if clock is None:
        return
    if phase == "start":
        clock[0] = time.perf_counter()
    elif clock[0] is not None:
        clock[1] = (clock[1] or 0.0) + time.perf_counter() - clock[0]
        clock[0] = None


def _timed_run(handle: asyncio.Handle) -> None:
    detectors = _WATCHED.get(handle._loop)  # type: ignore[attr-defined]
    if not detectors:
        return _original_run(handle)
    run: Callable[[], None] = lambda: _original_run(handle)  # noqa: E731
    for detector in reversed(detectors):
        run = (lambda d, inner: lambda: d._run_callback(handle, inner))(detector, run)
    return run()


def _task_of(handle: asyncio.Handle) -> asyncio.Task | None:
    """The task a callback steps or wakes (``Task.__step``/``__wakeup`` are bound to it)."""
    owner = getattr(getattr(handle, "_callback", None), "__self__", None)
    return owner if isinstance(owner, asyncio.Task) else None


class LoopStallDetector:
    """Context manager (sync or async) that watches the running loop while active.

    ``describe_task(task)`` names the episode a task runs (the executor passes one);
    ``on_stall(report)`` is called on the loop thread for each finished stall, and for a
    call that can never return (a sync request to a server this loop serves) as soon as it
    is seen. ``serves`` gives the ``(host, port)`` pairs this loop serves (the proxy's).
    ``long_s``: a callback still running after that long is logged while it runs.
    """

    def __init__(
        self,
        threshold_s: float = 0.05,
        *,
        describe_task: Callable[[asyncio.Task], str | None] | None = None,
        on_stall: Callable[[StallReport], None] | None = None,
        serves: Callable[[], set[tuple[str, int]]] | None = None,
        long_s: float = 5.0,
    ) -> None:
        if threshold_s <= 0:
            raise ValueError(f"threshold_s must be > 0, got {threshold_s}")
        self.threshold_s = threshold_s
        # Samples start a quarter of the threshold into a callback, then every tick.
        self.interval_s = min(threshold_s / 8, 0.01)
        self.describe_task = describe_task
        self.on_stall = on_stall
        self.serves = serves
        self.long_s = long_s
        self.stalls: list[StallReport] = []
        self._setup_sites: set[tuple[tuple[str, int], ...]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread_id: int | None = None
        self._clock: ThreadClock | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        # The callback now running on the loop thread (written there, read by the watcher).
        self._serial = 0
        self._running_since: float | None = None
        self._samples: list[StackSample] = []
        self._sampled_serial = -1
        self._sampled_episode: str | None = None
        self._serves_itself: str | None = None
        self._logged_long = -1
        self._current_task: asyncio.Task | None = None
        # [collection start or None, seconds collected] on the loop thread; its total when
        # the current callback began.
        self._gc_clock: list[float | None] = [None, 0.0]
        self._gc_at_start = 0.0

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> LoopStallDetector:
        """Start watching the running loop; call from inside it."""
        global _said_wall_only
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._loop_thread_id = threading.get_ident()
        if not isinstance(loop, asyncio.BaseEventLoop):
            logger.warning(
                "loop-stall detection needs asyncio's own event loop; %s is not watched",
                type(loop).__name__,
            )
            return self
        self._clock = ThreadClock(threading.get_native_id())
        if not self._clock.available and not _said_wall_only:
            _said_wall_only = True
            logger.warning(
                "this platform has no per-thread run-queue time: stalls are judged on wall "
                "time, so a busy machine can look like a stall"
            )
        _WATCHED.setdefault(loop, []).append(self)
        asyncio.events.Handle._run = _timed_run  # type: ignore[method-assign]
        self._gc_clock = _GC_CLOCKS.setdefault(self._loop_thread_id, [None, 0.0])
        if _gc_timer not in gc.callbacks:
            gc.callbacks.append(_gc_timer)
        # The callback running now (the one calling start) was not wrapped: time it from here to
        # the next callback the loop runs, which call_soon makes immediate.
        self._serial += 1
        self._current_task = asyncio.current_task(loop)
        self._gc_at_start = self._gc_clock[1] or 0.0
        self._running_since = time.perf_counter()
        loop.call_soon(lambda: None)
        self._stop.clear()
        self._watcher = threading.Thread(target=self._watch, name="areal-stall-watch", daemon=True)
        self._watcher.start()
        return self

    def stop(self) -> None:
        if threading.get_ident() == self._loop_thread_id:
            # Stopped from inside a callback: report it now if it is long, as the caller reads
            # ``stalls`` before that callback ends.
            self._close_current()
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None
        watching = _WATCHED.get(self._loop) if self._loop is not None else None
        if watching is not None and self in watching:
            watching.remove(self)
            if not watching:
                del _WATCHED[self._loop]  # type: ignore[arg-type]
        if not _WATCHED:
            asyncio.events.Handle._run = _original_run  # type: ignore[method-assign]
            _GC_CLOCKS.clear()
            if _gc_timer in gc.callbacks:
                gc.callbacks.remove(_gc_timer)
        if self._clock is not None:
            self._clock.close()
            self._clock = None

    def __enter__(self) -> LoopStallDetector:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> LoopStallDetector:
        return self.start()

    async def __aexit__(self, *exc: Any) -> None:
        self.stop()

    # -- the loop thread --------------------------------------------------------------------

    def _run_callback(self, handle: asyncio.Handle, run: Callable[[], None]) -> None:
        self._close_current()  # the callback that called start(), if it is still open
        clock = self._clock
        if clock is not None:  # before the start time: the reading must not be after it
            clock.keep_fresh(time.perf_counter())
        start = time.perf_counter()
        self._serial += 1
        self._current_task = _task_of(handle)
        self._gc_at_start = self._gc_clock[1] or 0.0
        self._running_since = start
        try:
            run()
        finally:
            self._close_current()

    def _close_current(self) -> None:
        """End the timing of the callback now running; report it if it stalled the loop."""
        start = self._running_since
        if start is None:  # not timed, or stop() already closed it
            return
        end = time.perf_counter()
        self._running_since = None
        # A call broken off because it waited on this loop's own server is reported however
        # short the breaking made it.
        deadlocked = self._sampled_serial == self._serial and self._serves_itself
        if end - start >= self.threshold_s or deadlocked:
            try:
                self._finish(self._current_task, start, end)
            except Exception:  # never let the detector break the loop it watches
                logger.exception("the loop-stall detector failed to report a stall")

    def _finish(self, task: asyncio.Task | None, start: float, end: float) -> None:
        serial = self._serial
        samples = list(self._samples) if self._sampled_serial == serial else []
        sampled = self._sampled_serial == serial
        serves_itself = self._serves_itself if sampled else None
        # Named while it ran: an episode that ends in this callback is no longer the task's.
        episode = self._sampled_episode if sampled else self._describe(task)
        approximate = False
        if not samples:  # the watcher had no CPU in time: the task's stack where it is now
            approximate = True
            frames = _task_frames(task) if task is not None else []
            samples = [StackSample(frames)] if frames else [StackSample([])]
        split = self._clock.split(start, end) if self._clock is not None else None
        collected = (self._gc_clock[1] or 0.0) - self._gc_at_start
        # One callback can run several episodes back to back (a worker whose episodes never
        # really suspend): each gets its own stall, with its share of the samples and time.
        by_episode: dict[str | None, list[StackSample]] = {}
        for sample in samples:
            by_episode.setdefault(sample.episode or episode, []).append(sample)
        for name, own in by_episode.items():
            share = len(own) / len(samples)
            self._record(
                StallReport(
                    duration_s=(end - start) * share,
                    task_name=task.get_name() if task is not None else None,
                    episode=name,
                    samples=own,
                    cpu_s=split[0] * share if split else None,
                    wait_s=split[1] * share if split else None,
                    threshold_s=self.threshold_s,
                    serves_itself=serves_itself
                    if any(s.serves_itself for s in own) or (serves_itself and len(by_episode) == 1)
                    else None,
                    approximate=approximate,
                    gc_s=collected * share,
                )
            )

    def _describe(self, task: asyncio.Task | None) -> str | None:
        if task is None or self.describe_task is None:
            return None
        return self.describe_task(task)

    def _record(self, report: StallReport) -> None:
        # A set-up site counts as repeated only if an earlier stall had it: the samples of
        # one stall all sit in the same set-up.
        sites = {id(s): setup_site(s) for s in report.samples if s.tls_setup}
        for sample in report.samples:
            if id(sample) in sites:
                sample.seen_before = sites[id(sample)] in self._setup_sites
        self._setup_sites.update(sites.values())
        report.seen_before = any(s.seen_before for s in report.samples)
        self.stalls.append(report)
        if self.on_stall is not None:
            self.on_stall(report)

    # -- the watcher thread -----------------------------------------------------------------

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self._clock is not None:
                self._clock.tick()
            since, serial = self._running_since, self._serial
            if since is None:
                continue
            running = time.perf_counter() - since
            if running < self.threshold_s / 4:
                continue
            try:
                self._sample(serial, running)
            except Exception:  # a frame that vanished mid-walk: skip this tick
                continue

    def _sample(self, serial: int, running: float) -> None:
        frame = sys._current_frames().get(self._loop_thread_id)  # type: ignore[arg-type]
        if frame is None or self._serial != serial:
            return
        stack = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
        stack.reverse()
        episode = self._describe(asyncio.current_task(self._loop))
        if self._sampled_serial != serial:
            self._samples, self._serves_itself = [], None
            self._sampled_episode = episode
            self._sampled_serial = serial
        sample = StackSample(list(stack), episode=episode, in_gc=self._gc_clock[0] is not None)
        self._samples.append(sample)
        if self.serves is not None:  # every sample: one callback can run several episodes
            found = loopback_peer_served(frame, self.serves())
            if found is not None:
                served, sock = found
                sample.serves_itself = True  # recorded before the call can return
                self._serves_itself = served
                if not break_off(sock):
                    return
                logger.error(
                    "the event loop is blocked on a request to %s, which this same loop "
                    "serves: the request can never be answered (a sync HTTP call in the "
                    "workflow, at %s); the connection is closed so the call fails now",
                    served,
                    _workflow_line(stack),
                )
        if running >= self.long_s and self._logged_long != serial:
            self._logged_long = serial
            logger.warning(
                "the event loop has been blocked for %.1f s, at %s; every episode waits",
                running,
                _workflow_line(stack),
            )


def _workflow_line(stack: traceback.StackSummary) -> str:
    sample = StackSample(list(stack))
    frame = sample.workflow_frame or sample.innermost
    return f"{frame.filename}:{frame.lineno}" if frame is not None else "<unknown>"


def _task_frames(task: asyncio.Task) -> list[traceback.FrameSummary]:
    """The task's coroutine stack as it is suspended now, outermost first."""
    frames = task.get_stack()
    return [
        traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in frames
    ]


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
