# SPDX-License-Identifier: Apache-2.0
"""The stall detector's verdicts: one stall per blocking callback, charged to its own episode,
and a busy machine never blamed on the code."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import traceback
import urllib.request

import pytest

from areal_runtime.infra import stall_detector
from areal_runtime.infra.stall_detector import LoopStallDetector, StackSample, StallReport
from areal_runtime.testing.episode import report_stalls

HERE = os.path.abspath(__file__)
_LIBRARY = stall_detector._LIBRARY_DIRS[0].rstrip("/")


def _frames(*sites: tuple[str, int, str]) -> list[traceback.FrameSummary]:
    return [traceback.FrameSummary(f, n, name) for f, n, name in sites]


@pytest.mark.asyncio
async def test_eight_episodes_blocking_back_to_back_are_eight_stalls_each_on_its_episode():
    names: dict[asyncio.Task, str] = {}

    async def episode(index: int) -> None:
        names[asyncio.current_task()] = f"episode {index}"  # type: ignore[index]
        await asyncio.sleep(0)
        time.sleep(0.08)  # noqa: ARL110  (the blocking line under test)

    with LoopStallDetector(0.05, describe_task=names.get) as detector:
        await asyncio.gather(*(episode(i) for i in range(8)))
    assert len(detector.stalls) == 8
    assert sorted(s.episode for s in detector.stalls) == sorted(f"episode {i}" for i in range(8))
    for stall in detector.stalls:
        assert stall.is_workflows, stall.format()
        assert stall.culprit.filename == HERE and "time.sleep(0.08)" in stall.culprit.line
        assert 0.07 <= stall.duration_s < 0.5  # one episode's sleep, not the eight together


@pytest.mark.asyncio
async def test_a_preemption_after_the_block_is_the_machines_and_the_block_still_the_codes(
    monkeypatch,
):
    """On a busy machine the loop thread can be preempted after a blocking callback ends and
    before the detector reads the thread's counters (CI at load 4.5: an 80 ms ``time.sleep``
    read as 76 ms waiting for a CPU, and was excused). A wait the reading holds beyond the time
    since the callback ended is the callback's; the rest came after it."""
    probe = stall_detector.ThreadClock(threading.get_native_id())
    if not probe.available:
        pytest.skip("no per-thread schedstat on this platform: stalls are judged on wall time")
    probe.close()
    preempt = {"next": False, "loop": threading.get_ident()}

    class PreemptedOnce(stall_detector.ThreadClock):
        def read(self):
            reading = super().read()
            if reading and preempt["next"] and threading.get_ident() == preempt["loop"]:
                preempt["next"] = False  # 300 ms on the run queue just before this read
                return reading[0] + 0.3, reading[1], reading[2] + 0.3
            return reading

    monkeypatch.setattr(stall_detector, "ThreadClock", PreemptedOnce)

    async def episode() -> None:
        await asyncio.sleep(0)
        time.sleep(0.08)  # noqa: ARL110  (the blocking line under test)
        preempt["next"] = True  # the next reading on the loop thread is the end's

    with LoopStallDetector(0.05) as detector:
        await episode()
    [stall] = detector.stalls
    assert stall.is_workflows, stall.format()
    assert stall.wait_s < 0.02 and 0.07 <= stall.duration_s < 0.2


def test_a_preemption_just_before_a_callback_is_not_charged_inside_it():
    """The kernel adds a run-queue wait to the thread's counter when the thread gets a CPU
    again, so the watcher's reading during a preemption lacks it. CI (load 4.5): a 78 ms
    preemption between two callbacks, read by the watcher 0.5 ms before the next one began,
    was charged inside that callback and excused its 80 ms ``time.sleep``. The loop thread's
    own reading at a callback's start is what counts."""
    clock = stall_detector.ThreadClock(threading.get_native_id())
    if not clock.available:
        pytest.skip("no per-thread schedstat on this platform")
    now = {"t": 0.0, "wait": 0.0}
    clock.read = lambda: (now["t"], 0.001, now["wait"])  # type: ignore[method-assign]

    def at(t: float, wait: float) -> None:
        now.update(t=t, wait=wait)

    at(0.0, 0.0)
    clock.keep_fresh(0.0)  # the loop thread, between callbacks
    at(0.079, 0.0)
    clock.tick()  # the watcher, while the loop thread waits on the run queue: not counted yet
    at(0.0795, 0.078)
    clock.keep_fresh(0.0795)  # the loop thread has its CPU back: the wait is in the counter
    at(0.12, 0.078)
    clock.tick()  # the watcher, while the callback sleeps
    at(0.1597, 0.078)
    cpu, wait = clock.split(0.0796, 0.1596)  # an 80 ms time.sleep
    clock.close()
    assert wait < 0.005 and cpu == pytest.approx(0.0)


def test_the_site_is_the_one_most_samples_show_and_a_set_up_excuses_only_its_own_samples():
    library = StackSample(
        _frames(
            ("/app/flow.py", 3, "run"),
            ("/usr/lib/python3.11/ssl.py", 770, "create_default_context"),
        )
    )
    own = StackSample(_frames(("/app/flow.py", 9, "run")))
    # 100 ms of TLS set-up on first use, then 300 ms of the workflow's own blocking
    mixed = StallReport(0.4, None, "episode 2", samples=[library, own, own, own], threshold_s=0.05)
    assert mixed.is_workflows and mixed.culprit.lineno == 9
    assert "by episode 2 at /app/flow.py:9" in mixed.format()
    # mostly set-up: the workflow's quarter of 120 ms is 30 ms, under the threshold
    setup = StallReport(
        0.12, None, "episode 2", samples=[library, library, library, own], threshold_s=0.05
    )
    assert not setup.is_workflows and setup.verdict == "library"
    assert "once per process" in setup.format()


def test_a_stall_that_is_mostly_run_queue_wait_is_the_machines_and_fails_nothing():
    own = StackSample(_frames(("/app/flow.py", 9, "reward")))
    busy = StallReport(
        0.12, None, "episode 1", samples=[own], cpu_s=0.03, wait_s=0.09, threshold_s=0.05
    )
    assert busy.verdict == "machine" and not busy.is_workflows and not busy.counts
    text = busy.format()
    assert "the loop thread waited 90 ms of 120 ms for a CPU" in text
    assert "not by workflow code" in text
    report_stalls([busy], "fail")  # does not raise
    blocked = StallReport(
        0.12, None, "episode 1", samples=[own], cpu_s=0.01, wait_s=0.02, threshold_s=0.05
    )
    assert blocked.is_workflows
    assert "10 ms computing, 90 ms blocked in a call, 20 ms waiting for a CPU" in blocked.format()


def test_the_advice_for_computing_is_a_process_and_for_a_blocking_call_async_or_a_thread():
    """A thread takes a blocking call off the loop, but not Python computing: that holds the
    GIL in the thread as well."""
    own = StackSample(_frames(("/app/flow.py", 9, "reward")))
    computing = StallReport(
        0.2, None, "episode 1", samples=[own], cpu_s=0.19, wait_s=0.005, threshold_s=0.05
    )
    assert computing.is_workflows and computing.computing
    assert "ProcessPoolExecutor" in computing.format()
    assert "asyncio.to_thread" not in computing.format()
    blocked = StallReport(
        0.2, None, "episode 1", samples=[own], cpu_s=0.01, wait_s=0.005, threshold_s=0.05
    )
    assert blocked.is_workflows and not blocked.computing
    assert "asyncio.to_thread" in blocked.format()
    no_clock = StallReport(0.2, None, "episode 1", samples=[own], threshold_s=0.05)
    assert "asyncio.to_thread" in no_clock.format()  # unknown split: the general advice


def _pinned_burner(cpu: int) -> subprocess.Popen:
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    return subprocess.Popen([sys.executable, "-c", code])


def _spin(cpu_seconds: float) -> None:
    start = time.thread_time()
    while time.thread_time() - start < cpu_seconds:
        pass


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="Linux schedstat only")
def test_on_a_cpu_shared_with_a_burner_compute_under_the_threshold_is_not_a_stall():
    """Pinned to one CPU beside a busy process, 30 ms of computing takes about 60 ms of wall
    time: the machine's. A 100 ms sleep there is still the workflow's."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    before = os.sched_getaffinity(0)
    burner = _pinned_burner(cpu)
    stalls: list[StallReport] = []

    async def main() -> None:
        os.sched_setaffinity(threading.get_native_id(), {cpu})
        with LoopStallDetector(0.05) as detector:
            await asyncio.sleep(0.3)  # the burner is running
            for _ in range(3):
                _spin(0.03)
                await asyncio.sleep(0.01)
            time.sleep(0.1)  # noqa: ARL110  (a real block beside the burner)
            await asyncio.sleep(0.01)
        stalls.extend(detector.stalls)

    try:
        asyncio.run(main())
    finally:
        burner.kill()
        burner.wait()
        os.sched_setaffinity(threading.get_native_id(), before)
    spins = [s for s in stalls if "_spin" in s.format() or (s.cpu_s or 0) > 0.02]
    sleeps = [s for s in stalls if s.is_workflows]
    assert all(not s.is_workflows for s in spins), [s.format() for s in spins]
    assert len(sleeps) == 1 and "time.sleep(0.1)" in (sleeps[0].culprit.line or "")
    for stall in spins:
        assert stall.wait_s is not None and stall.counted_s < 0.05


@pytest.mark.asyncio
async def test_a_sync_request_to_a_server_this_loop_serves_fails_at_once_and_is_named():
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/models"
    reply = await asyncio.to_thread(urllib.request.urlopen, url, timeout=5)
    assert reply.read() == b"ok"  # off the loop it is answered

    async def episode() -> None:
        await asyncio.sleep(0)
        urllib.request.urlopen(url, timeout=30)  # noqa: ARL120  (the deadlock under test)

    started = time.perf_counter()
    with LoopStallDetector(0.05, serves=lambda: {("127.0.0.1", port)}) as detector:
        (error,) = await asyncio.gather(episode(), return_exceptions=True)
    assert isinstance(error, OSError)  # the connection was closed under the blocked call
    took = time.perf_counter() - started
    server.close()
    assert took < 5, "the blocked call was not broken off"
    (stall,) = [s for s in detector.stalls if s.serves_itself]
    assert stall.is_workflows and stall.serves_itself == f"127.0.0.1:{port}"
    text = stall.format()
    assert "this call blocks the loop that serves it" in text
    assert "urlopen(url, timeout=30)" in text


def test_reports_without_samples_or_a_clock_still_judge_by_the_one_stack():
    frames = _frames(("/app/flow.py", 3, "run"))
    legacy = StallReport(0.2, None, "episode 0", frames)
    assert legacy.is_workflows and legacy.cpu_s is None
    assert "computing" not in legacy.format()  # no split is claimed where none was measured


@pytest.mark.asyncio
async def test_a_long_block_is_logged_while_it_runs_and_a_failing_callback_breaks_nothing(caplog):
    def broken(_report: StallReport) -> None:
        raise RuntimeError("a bug in the caller's on_stall")

    async def episode() -> str:
        await asyncio.sleep(0)
        time.sleep(0.4)  # noqa: ARL110  (a block longer than long_s)
        await asyncio.sleep(0)
        return "done"

    with LoopStallDetector(0.05, long_s=0.2, on_stall=broken) as detector:
        assert await episode() == "done"  # the loop goes on after the failing on_stall
    assert any("has been blocked for" in r.getMessage() for r in caplog.records)
    assert any("failed to report a stall" in r.getMessage() for r in caplog.records)
    assert len(detector.stalls) == 1


def test_a_set_up_sampled_many_times_in_one_stall_is_still_a_first_use():
    """Found: every sample after the first of one TLS set-up looked like a repeat, so a client
    built once was reported as built on every episode."""
    tls = _frames(
        ("/app/agent.py", 12, "run"),
        (f"{_LIBRARY}/httpx/_config.py", 35, "create_ssl_context"),
        ("/usr/lib/python3.11/ssl.py", 770, "create_default_context"),
    )
    detector = LoopStallDetector(0.05)
    first = StallReport(0.3, None, "episode 0", samples=[StackSample(list(tls)) for _ in range(5)])
    first.threshold_s = 0.05
    detector._record(first)
    assert not first.is_workflows and first.verdict == "library"
    again = StallReport(0.3, None, "episode 1", samples=[StackSample(list(tls))], threshold_s=0.05)
    detector._record(again)  # the same site in a later stall: built per episode
    assert again.is_workflows


@pytest.mark.asyncio
async def test_a_garbage_collection_pause_is_the_interpreters_not_the_workflows():
    """Found in CI: a 468 ms collection inside an openai call was charged to the workflow's
    ``await client.chat.completions.create(...)`` line. A collection runs wherever the next
    allocation happens; the workflow has nothing to make async."""
    live = [[i] for i in range(1_500_000)]  # containers the collector must traverse
    names: dict[asyncio.Task, str] = {}

    async def episode() -> None:
        names[asyncio.current_task()] = "episode 0"  # type: ignore[index]
        await asyncio.sleep(0)
        started = time.perf_counter()
        while time.perf_counter() - started < 0.15:
            gc.collect()  # as an allocation that sets off a full collection would

    with LoopStallDetector(0.05, describe_task=names.get) as detector:
        await episode_task(episode)
    del live
    assert detector.stalls, "the collections held the loop past the threshold"
    for stall in detector.stalls:
        assert stall.gc_s >= 0.1, stall
        assert not stall.is_workflows, stall.format()
        assert "garbage collector" in stall.format()
    report_stalls(detector.stalls, "fail")  # does not raise

    # A collection inside a stall that is mostly the workflow's own blocking stays the workflow's.
    own = StackSample(_frames(("/app/flow.py", 9, "run")))
    mostly_own = StallReport(
        0.4, None, "episode 1", samples=[own] * 4, cpu_s=0.1, wait_s=0.0, gc_s=0.05,
        threshold_s=0.05,
    )  # fmt: skip
    assert mostly_own.is_workflows and "garbage collector" in mostly_own.format()


async def episode_task(body) -> None:
    await asyncio.create_task(body())


def test_a_chat_templates_first_compile_is_a_one_time_set_up_and_rendering_is_not():
    """Found by the demo on a busy machine: the generated test's first episode spent 250-400 ms
    compiling the chat template (jinja; transformers caches the compiled template), and the
    stall was charged to the workflow's line."""
    workflow = ("/app/flow.py", 12, "arun_episode")
    template = (f"{_LIBRARY}/transformers/utils/chat_template_utils.py", 500, "render")
    compiling = StackSample(
        _frames(
            workflow,
            template,
            (f"{_LIBRARY}/jinja2/environment.py", 1105, "from_string"),
            (f"{_LIBRARY}/jinja2/compiler.py", 120, "generate"),
        )
    )
    first = StallReport(0.3, None, "episode 0", samples=[compiling] * 3, threshold_s=0.1)
    assert first.verdict == "library" and not first.is_workflows
    assert "jinja compiling a chat template" in first.format()
    rendering = StackSample(
        _frames(workflow, template, (f"{_LIBRARY}/jinja2/runtime.py", 300, "call"))
    )
    slow_render = StallReport(0.3, None, "episode 0", samples=[rendering] * 3, threshold_s=0.1)
    assert slow_render.is_workflows  # rendering happens every episode: the workflow's to fix
