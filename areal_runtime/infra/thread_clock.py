# SPDX-License-Identifier: Apache-2.0
"""A thread's time on a CPU and in a run queue, so a busy machine is not blamed on the code.

Linux keeps both per thread in ``/proc/self/task/<tid>/schedstat`` (nanoseconds on a CPU,
nanoseconds runnable but waiting). The watcher thread reads it every tick into a short history,
and the loop thread adds one only when its own newest is over ``fresh_s`` old (a few hundred reads a
second at most, not one per callback); the value at a callback's start is interpolated from that
history, the value at its end is read once the callback is known to be long.
Elsewhere (macOS, Windows) there is no such file: only wall time is known.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections import deque

Reading = tuple[float, float, float]  # (perf_counter, seconds on a CPU, seconds waiting for one)


class ThreadClock:
    """Readings of one thread's schedstat; ``available`` is False where the platform has none."""

    def __init__(self, native_id: int, history: int = 512, fresh_s: float = 0.002) -> None:
        self.fresh_s = fresh_s
        self.last_time = 0.0
        self.own_time = float("-inf")  # the loop thread's own newest reading
        self._fd: int | None = None
        try:
            self._fd = os.open(f"/proc/self/task/{native_id}/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None
        self._history: deque[Reading] = deque(maxlen=history)
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return self._fd is not None

    def read(self) -> Reading | None:
        """Now, with the thread's CPU and run-queue seconds so far.

        The time and the counters are taken together: a thread preempted between reading the
        clock and the file would pair a run-queue wait with a time before it (on a busy
        machine, tens of milliseconds), so the file is read on both sides of the clock until
        no wait came between (a few tries at most).
        """
        if self._fd is None:
            return None
        try:
            after = os.pread(self._fd, 96, 0).split()
            for _ in range(4):
                before = after
                now = time.perf_counter()
                after = os.pread(self._fd, 96, 0).split()
                if after[1] == before[1]:  # no run-queue wait around the clock's reading
                    break
            return now, int(after[0]) / 1e9, int(after[1]) / 1e9
        except (OSError, ValueError, IndexError):  # the thread ended, or an odd kernel
            return None

    def tick(self) -> None:
        """Record a reading in the history (the watcher calls this every tick)."""
        reading = self.read()
        if reading is not None:
            with self._lock:
                if not self._history or self._history[-1][0] <= reading[0]:
                    self._history.append(reading)
                    self.last_time = reading[0]

    def keep_fresh(self, now: float) -> None:
        """From the loop thread at a callback's start: a reading of its own no older than
        ``fresh_s``. Only its own: the kernel adds a run-queue wait to the counter when the
        thread gets a CPU again, so the watcher's reading during a preemption lacks it (CI:
        a 78 ms preemption just before a callback was charged inside it, and excused an 80 ms
        ``time.sleep`` as the machine's)."""
        if self._fd is not None and now - self.own_time > self.fresh_s:
            self.tick()
            self.own_time = now

    def at(self, when: float) -> Reading | None:
        """The reading at ``when`` (a perf_counter time), interpolated from the history."""
        with self._lock:
            history = list(self._history)
        if not history or history[0][0] > when:
            return None
        index = bisect.bisect_right([r[0] for r in history], when)
        before = history[index - 1]
        if index == len(history):
            return before
        after = history[index]
        span = after[0] - before[0]
        weight = (when - before[0]) / span if span > 0 else 0.0
        return (
            when,
            before[1] + weight * (after[1] - before[1]),
            before[2] + weight * (after[2] - before[2]),
        )

    def split(self, start: float, end: float) -> tuple[float, float] | None:
        """(seconds on a CPU, seconds waiting for one) between two perf_counter times.

        The counters are read after ``end``, and a busy machine can preempt the thread in
        between (CI at load 4.5: 76 ms, which excused an 80 ms ``time.sleep`` as the machine's
        wait). Whatever wait the reading holds beyond the time since ``end`` happened before it,
        so only that part is counted.
        """
        first, last = self.at(start), self.read()
        if first is None or last is None:
            return None
        wall = end - start
        since_end = max(0.0, last[0] - end)
        cpu = min(wall, max(0.0, last[1] - first[1]))
        wait = min(wall - cpu, max(0.0, last[2] - first[2] - since_end))
        return cpu, wait

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
