# SPDX-License-Identifier: Apache-2.0
"""A small process pool that can kill one stuck worker: rewards and subprocess agents run here.

Why not ``concurrent.futures.ProcessPoolExecutor``: a running job there cannot be cancelled, so
a reward that hangs pins its worker for good (AReaL #1426), and one dead worker breaks the whole
pool. Here each worker slot is driven by one thread that sends a job over a pipe, waits for the
answer with a deadline that starts when the worker picks the job up, and kills and replaces the
worker on timeout or death. Workers are plain ``python -m`` subprocesses (``subprocess.Popen``
over a socketpair; see ``_Worker`` for why not ``multiprocessing``), and each caches the
unpickled function by the hash of its pickle, so a function is sent once per worker, not once
per call. ``AsyncRewardWrapper`` and subprocess agents use separate pools (``shared_pool(size,
name)``), so a long agent never holds a reward's worker.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import pickle
import queue
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any


class WorkerTimedOutError(Exception):
    """The job ran past its deadline; its worker was killed."""


class WorkerCrashedError(Exception):
    """The worker process died while running the job."""


@dataclass
class Job:
    fn_bytes: bytes
    payload: bytes
    timeout_s: float | None
    fn_key: str = field(init=False)

    def __post_init__(self) -> None:
        self.fn_key = hashlib.sha1(self.fn_bytes).hexdigest()


_STARTUP_LIMIT_S = 120.0
"""How long a fresh worker may take to import the function's module."""


def _worker_main(conn: Any) -> None:
    """Worker loop: acknowledge each job once it starts, run it, send the answer back."""
    functions: dict[str, Any] = {}
    while True:
        try:
            fn_key, fn_bytes, payload, paths = conn.recv()
        except (EOFError, OSError):
            return
        try:
            # The caller's sys.path now, not when this worker started: a module folder added
            # since (a test's helpers, a plugin) must import here too.
            sys.path.extend(p for p in paths if p not in sys.path)
            if fn_bytes is not None:
                functions[fn_key] = pickle.loads(fn_bytes)
            args, kwargs = pickle.loads(payload)
            conn.send("started")
            result = functions[fn_key](*args, **kwargs)
            answer = (True, result)
            pickle.dumps(answer)
        except BaseException as exc:
            answer = (False, f"{type(exc).__name__}: {exc}")
        conn.send(answer)


class _Worker:
    """A worker is a plain ``python -m`` subprocess talking over a socketpair.

    Why not ``multiprocessing``: its fork start method is unsafe in a threaded parent, and its
    spawn/forkserver methods re-import the user's ``__main__``, which re-runs scripts that lack
    an ``if __name__ == "__main__"`` guard.
    """

    def __init__(self) -> None:
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(child_sock.fileno())],
            pass_fds=(child_sock.fileno(),),
            env=env,
            stdin=subprocess.DEVNULL,
        )
        child_sock.close()
        self.conn = Connection(parent_sock.detach())
        self.known: set[str] = set()

    def is_alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(0.5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.conn.close()


@dataclass
class _Entry:
    job: Job
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future
    cancelled: bool = False


def _resolve(future: asyncio.Future, outcome: tuple[str, Any]) -> None:
    if future.done():
        return
    kind, value = outcome
    if kind == "result":
        future.set_result(value)
    elif kind == "timeout":
        future.set_exception(WorkerTimedOutError())
    else:
        future.set_exception(WorkerCrashedError(value))


class WorkerPool:
    """``size`` worker slots fed from one queue; threads and processes start on first use."""

    def __init__(self, size: int, name: str = "reward") -> None:
        self.size = size
        self.name = name
        self._jobs: queue.Queue[_Entry | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._workers: list[_Worker | None] = []
        self._lock = threading.Lock()

    async def run(self, job: Job) -> tuple[bool, Any]:
        """``(True, result)`` or ``(False, "ExcType: message")`` from the function."""
        loop = asyncio.get_running_loop()
        entry = _Entry(job, loop, loop.create_future())
        self._start_threads()
        self._jobs.put(entry)
        try:
            return await entry.future
        except asyncio.CancelledError:
            entry.cancelled = True
            raise

    def _start_threads(self) -> None:
        with self._lock:
            while len(self._threads) < self.size:
                slot = len(self._threads)
                self._workers.append(None)
                thread = threading.Thread(
                    target=self._serve, args=(slot,), name=f"areal-{self.name}-{slot}", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _serve(self, slot: int) -> None:
        while True:
            entry = self._jobs.get()
            if entry is None:
                return
            if entry.cancelled or entry.loop.is_closed():
                continue
            outcome = self._run_on_worker(slot, entry.job)
            try:
                entry.loop.call_soon_threadsafe(_resolve, entry.future, outcome)
            except RuntimeError:  # the caller's event loop closed while the job ran
                continue  # nobody waits for this answer; the slot must keep serving others

    def _run_on_worker(self, slot: int, job: Job) -> tuple[str, Any]:
        worker = self._workers[slot]
        if worker is None or not worker.is_alive():
            if worker is not None:
                worker.kill()
            worker = self._workers[slot] = _Worker()
        fn_bytes = None if job.fn_key in worker.known else job.fn_bytes
        try:
            worker.conn.send((job.fn_key, fn_bytes, job.payload, [p for p in sys.path if p]))
            if not worker.conn.poll(_STARTUP_LIMIT_S):
                self._replace(slot)
                return ("crash", f"worker did not start the job within {_STARTUP_LIMIT_S}s")
            first = worker.conn.recv()
            if first == "started":
                worker.known.add(job.fn_key)  # only once it loaded: a failed load is resent
                if not worker.conn.poll(job.timeout_s):
                    self._replace(slot)
                    return ("timeout", None)
                ok, value = worker.conn.recv()
            else:
                ok, value = first
        except (EOFError, OSError) as exc:
            try:  # the pipe closes a moment before the process can be reaped
                code = worker.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            self._replace(slot)
            return ("crash", f"exit code {code}" if code is not None else repr(exc))
        return ("result", (ok, value))

    def _replace(self, slot: int) -> None:
        worker = self._workers[slot]
        if worker is not None:
            worker.kill()
        self._workers[slot] = None

    def shutdown(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for slot in range(len(self._workers)):
            self._replace(slot)


_pools: dict[tuple[str, int], WorkerPool] = {}
_pools_lock = threading.Lock()


def shared_pool(size: int, name: str = "reward") -> WorkerPool:
    """The process-wide pool ``name`` with ``size`` slots; it lives until interpreter exit."""
    with _pools_lock:
        pool = _pools.get((name, size))
        if pool is None:
            pool = _pools[(name, size)] = WorkerPool(size, name)
        return pool


@atexit.register
def _shutdown_pools() -> None:
    with _pools_lock:
        for pool in _pools.values():
            pool.shutdown()
        _pools.clear()


if __name__ == "__main__":
    _worker_main(Connection(int(sys.argv[1])))
