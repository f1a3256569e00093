# SPDX-License-Identifier: Apache-2.0
"""What one stall of the event loop was, and whose: the workflow's, a library's, the runtime's,
or a busy machine's. The detector (``stall_detector``) measures; this module judges."""

from __future__ import annotations

import asyncio
import os
import site
import sysconfig
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

# pydantic's schema generation and model construction (validators are built on first use)
_PYDANTIC_BUILD = ("/pydantic/_internal/", "/pydantic/plugin/")
# jinja compiling a template (a chat template on first use; transformers caches the compiled one)
_JINJA_COMPILE_FILES = ("/jinja2/parser.py", "/jinja2/compiler.py", "/jinja2/lexer.py")
_JINJA_COMPILE_CALLS = ("from_string", "compile", "_parse", "_generate", "_compile")
# Building a TLS context reads the CA bundle (30-300 ms): an SDK does it once for the client it
# keeps (the Agents SDK's tracing exporter, httpx's default transport).
_TLS_SETUP = ("create_default_context", "load_default_certs", "_create_default_https_context")
_SSL_MODULE = os.sep + "ssl.py"
# Libraries' own TLS-context builders (httpx's create_ssl_context, httpcore's, urllib3's): the
# CA bundle is read from Python code that calls SSLContext.load_verify_locations directly.
_LIBRARY_TLS_SETUP = (
    "create_ssl_context", "default_ssl_context", "load_ssl_context", "load_ssl_context_verify",
    "create_urllib3_context",
)  # fmt: skip
_CALLERS = ("runtime", "workflow")
_INTERNAL_DIRS = (
    os.path.dirname(asyncio.__file__),
    os.path.dirname(threading.__file__) + os.sep + "threading.py",
    os.path.dirname(os.path.dirname(__file__)) + os.sep + "infra",
)
_DETECTOR_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stall_detector.py")
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
    if path == _DETECTOR_FILE:  # the detector's own wrapper around each callback: machinery
        return None
    if path.startswith(_RUNTIME_DIRS):
        return "runtime"
    if path.startswith(_LIBRARY_DIRS):  # first: a virtualenv's site-packages is inside its stdlib
        return "library"
    if path.startswith(_STDLIB_DIRS):
        return None
    return "workflow"


@dataclass
class StackSample:
    """One sample of the loop thread's stack during a stall, and whose code it shows.

    ``seen_before`` is set by the detector when the same set-up at the same call site already
    stalled the loop in this run: then it is paid per episode (a client built per episode), not
    once, and it is the workflow's to fix.
    """

    frames: list[traceback.FrameSummary] = field(default_factory=list)
    seen_before: bool = False
    episode: str | None = None  # the episode the running task was on when sampled
    serves_itself: bool = False  # blocked on a request to a server this loop serves
    in_gc: bool = False  # taken while Python's garbage collector ran on the loop thread

    @property
    def owner(self) -> Owner:
        """Who blocked the loop: the first non-stdlib frame from the innermost one decides.

        Workflow code, or a library it called, is the workflow's stall; the runtime's own code
        (an engine, the proxy, the executor starting a pool thread) is the runtime's. A
        library's first-use set-up (a first import, a pydantic schema, a TLS context) is the
        library's even when the workflow's call reached it: the workflow cannot avoid it.
        """
        if self.in_gc:  # the interpreter's pause, whichever line's allocation set it off
            return "runtime"
        frames = list(reversed(self.frames))
        for index, frame in enumerate(frames):
            if frame.filename.endswith(_THREAD_START[0]) and frame.name == _THREAD_START[1]:
                return "runtime"
            owner = frame_owner(frame.filename)
            if owner == "runtime":
                return "runtime"
            if owner is not None:
                # A library is charged to whoever called it: the nearest enclosing frame of the
                # runtime's (the proxy tokenizing, the shared client built on first use) or of
                # the workflow's; with neither, it is the library's own.
                caller = next(
                    (o for f in frames[index:] if (o := frame_owner(f.filename)) in _CALLERS), None
                )
                if caller == "runtime":
                    return "runtime"
                if caller is None:
                    return "library"
                return "library" if self.one_time else "workflow"
        return "runtime"

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
        return any(
            (f.filename.endswith(_SSL_MODULE) and f.name in _TLS_SETUP)
            or (f.name in _LIBRARY_TLS_SETUP and frame_owner(f.filename) == "library")
            for f in self.frames
        )

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
        if any(
            f.filename.replace("\\", "/").endswith(_JINJA_COMPILE_FILES)
            or (
                f.filename.replace("\\", "/").endswith("/jinja2/environment.py")
                and f.name in _JINJA_COMPILE_CALLS
            )
            for f in self.frames
        ):
            return "jinja compiling a chat template on its first use (the compiled one is cached)"
        if self.tls_setup and not self.seen_before:
            return "TLS set-up on first use: ssl.create_default_context reads the CA bundle"
        return None

    @property
    def one_time(self) -> bool:
        """A library's first-use set-up: once per process, so a test reports none of them."""
        return self.setup is not None

    @property
    def is_workflows(self) -> bool:
        """Whether this sample shows the workflow's own code, not a one-time cost."""
        return self.owner == "workflow" and not self.one_time

    @property
    def site(self) -> tuple[Owner, str]:
        """Who and where, to group samples: the user's line, or the set-up's or innermost frame."""
        if self.owner == "workflow" and not self.one_time:
            return "workflow", _where(self.culprit)
        where = self.library_frame if self.one_time and self.library_frame else self.innermost
        return self.owner, _where(where)

    @property
    def location(self) -> str:
        return _where(self.culprit)


Verdict = Literal["workflow", "runtime", "library", "machine"]


@dataclass
class StallReport:
    """One blocking callback on the event loop: how long, whose task, where, and whose fault.

    The wall time splits three ways for the loop thread (``cpu_s`` computing, ``wait_s``
    runnable but waiting for a CPU, the rest blocked in a call); only computing and blocking
    count (``counted_s``): a stall that is mostly run-queue wait is the machine's. Where it
    happened comes from stack ``samples`` taken throughout the stall; the workflow is charged
    for the share of samples in its own code, never for a library's one-time set-up.
    ``frames`` alone (no samples) is one sample, as a hand-made report in a test gives.
    """

    duration_s: float
    task_name: str | None
    episode: str | None
    frames: list[traceback.FrameSummary] = field(default_factory=list)
    seen_before: bool = False
    samples: list[StackSample] = field(default_factory=list)
    cpu_s: float | None = None
    wait_s: float | None = None
    threshold_s: float = 0.0
    # "host:port" when the loop blocked on a request to a server that this same loop serves
    serves_itself: str | None = None
    # no sample was taken during the stall: the site is where the task was next suspended
    approximate: bool = False
    # time Python's garbage collector ran on the loop thread during the stall
    gc_s: float = 0.0

    def __post_init__(self) -> None:
        if not self.samples:
            self.samples = [StackSample(list(self.frames), self.seen_before)]
        if not self.frames:
            self.frames = list(self.shown.frames)

    @property
    def counted_s(self) -> float:
        """Wall time less the run-queue wait and the garbage collector's pauses: what the
        loop thread computed or blocked in on the code's own behalf."""
        return self.duration_s - (self.wait_s or 0.0) - self.gc_s

    @property
    def blocked_s(self) -> float | None:
        if self.cpu_s is None or self.wait_s is None:
            return None
        return max(0.0, self.duration_s - self.cpu_s - self.wait_s)

    @property
    def workflow_share(self) -> float:
        """The share of stack samples in the workflow's own code (set-ups excluded)."""
        return sum(s.is_workflows for s in self.samples) / len(self.samples)

    @property
    def verdict(self) -> Verdict:
        """Whose stall it is. The machine's when what the loop did itself stays under the
        threshold; the workflow's when its share of the counted time reaches it (or when it
        called a server this loop serves); else the runtime's or a library's."""
        if self.serves_itself:
            return "workflow"
        if self.wait_s is not None and self.counted_s + self.gc_s < self.threshold_s:
            return "machine"
        if self.gc_s > 0 and self.counted_s < self.threshold_s:
            return "runtime"  # Python's collector, set off by whichever allocation came next
        if self.threshold_s > 0 and self.workflow_share * self.counted_s >= self.threshold_s:
            return "workflow"
        if self.threshold_s <= 0 and self.workflow_share > 0.5:
            return "workflow"
        owner = self.shown.owner
        return "library" if owner == "workflow" else owner

    @property
    def is_workflows(self) -> bool:
        """Whether the workflow's code should change (what fails ``--fail-on-stall``)."""
        return self.verdict == "workflow"

    @property
    def counts(self) -> bool:
        """Whether the loop itself was blocked past the threshold (not a busy machine)."""
        return self.verdict != "machine"

    @property
    def shown(self) -> StackSample:
        """The sample to describe: the workflow's most sampled line when the stall is the
        workflow's, else the most sampled site of all."""
        pool = [s for s in self.samples if s.serves_itself]
        pool = pool or ([s for s in self.samples if s.is_workflows] if self._workflow_leads else [])
        pool = pool or self.samples
        sites = Counter(s.site for s in pool)
        top = max(sites.values())
        return next(s for s in pool if sites[s.site] == top)

    @property
    def _workflow_leads(self) -> bool:
        if self.serves_itself or self.threshold_s <= 0:
            return self.workflow_share > 0.5 or bool(self.serves_itself)
        return self.workflow_share * self.counted_s >= self.threshold_s

    # What the shown sample says, for callers that read one stack.
    owner = property(lambda self: self.shown.owner)
    culprit = property(lambda self: self.shown.culprit)
    workflow_frame = property(lambda self: self.shown.workflow_frame)
    innermost = property(lambda self: self.shown.innermost)
    library_frame = property(lambda self: self.shown.library_frame)
    library_name = property(lambda self: self.shown.library_name)
    setup = property(lambda self: self.shown.setup)
    one_time = property(lambda self: self.shown.one_time)
    tls_setup = property(lambda self: self.shown.tls_setup)
    location = property(lambda self: self.shown.location)

    @property
    def computing(self) -> bool:
        """Most of the stall was the loop thread on a CPU (not in a call, not waiting for one):
        work that a thread would not take off the loop, since it holds the GIL there too."""
        if self.cpu_s is None or self.wait_s is None:
            return False
        return self.cpu_s - self.gc_s >= 0.75 * (self.duration_s - self.wait_s)

    def _split(self) -> str | None:
        if self.cpu_s is None or self.wait_s is None:
            return None
        ms = lambda seconds: f"{seconds * 1000:.0f} ms"  # noqa: E731
        text = (
            f"{ms(self.cpu_s)} computing, {ms(self.blocked_s or 0.0)} blocked in a call, "
            f"{ms(self.wait_s)} waiting for a CPU"
        )
        if self.gc_s > 0:
            text += f" ({ms(self.gc_s)} of the computing was Python's garbage collector)"
        if len(self.samples) > 1:
            text += (
                f"; {self.workflow_share:.0%} of {len(self.samples)} stack samples in workflow code"
            )
        return text

    def format(self) -> str:
        took = f"event loop blocked for {self.duration_s * 1000:.0f} ms"
        shown = self.shown
        verdict = self.verdict
        if verdict == "machine":
            return (
                f"{took}, not by workflow code: the loop thread waited "
                f"{(self.wait_s or 0.0) * 1000:.0f} ms of {self.duration_s * 1000:.0f} ms for a "
                f"CPU (the machine was busy; {self._split()}), last at {_where(shown.innermost)}"
            )
        if verdict != "workflow":
            if verdict == "runtime" and self.gc_s > 0 and self.counted_s < self.threshold_s:
                return (
                    f"{took} by Python's garbage collector ({self.gc_s * 1000:.0f} ms "
                    f"collecting), not by workflow code, last at {_where(shown.innermost)}"
                )
            if verdict == "runtime":
                whose = "the runtime"
            else:
                name = shown.library_name
                whose = f"library code ({name})" if name else "library code"
            site = shown.site[1]
            text = f"{took} by {whose}, not by workflow code, at {site}"
            if shown.one_time:
                text += f" ({shown.setup}; once per process, nothing to change)"
            return text
        who = self.episode or self.task_name or "code outside any task"
        lines = [f"{took} by {who} at {shown.location}"]
        frame = shown.culprit
        if frame is not None and frame.line:
            lines.append(f"    {frame.line}")
        if shown.innermost is not None and shown.innermost is not frame:
            lines.append(f"    inside {_where(shown.innermost)}")
        if self.serves_itself:
            lines.append(
                f"    this call blocks the loop that serves it ({self.serves_itself}); the "
                "request can never be answered: call it with an async client and await it"
            )
        elif shown.tls_setup:
            lines.append(
                "    a TLS context is built here on every episode: build the client once (in "
                "__init__, or use the http_client the runtime passes) and reuse it"
            )
        elif self.computing:
            lines.append(
                "    every episode shares this loop, and this is Python computing, which holds "
                "the GIL in a thread too: run it in a process (loop.run_in_executor with a "
                "concurrent.futures.ProcessPoolExecutor; a reward function: AsyncRewardWrapper)"
            )
        else:
            lines.append(
                "    every episode shares this loop: make the call async (aiofiles, "
                "asyncio.sleep, httpx.AsyncClient) or move it off the loop with asyncio.to_thread"
            )
        split = self._split()
        if split:
            lines.append(f"    {split}")
        if self.approximate:
            lines.append(
                "    (no stack sample fell inside the stall: the line is where the "
                "episode was next suspended)"
            )
        return "\n".join(lines)


def setup_site(sample: StackSample) -> tuple[tuple[str, int], ...]:
    """Where a set-up was reached from: every non-stdlib frame (the same site twice repeats)."""
    return tuple(
        (f.filename, f.lineno or 0) for f in sample.frames if frame_owner(f.filename) is not None
    )


def _where(frame: traceback.FrameSummary | None) -> str:
    return f"{frame.filename}:{frame.lineno} in {frame.name}" if frame else "<unknown>"
