# SPDX-License-Identifier: Apache-2.0
"""Run code in a local subprocess with a time and a memory limit.

Why a subprocess and not ``exec``: model-written code can loop forever, allocate without end,
call ``os._exit`` or corrupt the interpreter; a child process is killed at its deadline (its
whole process group) and capped by ``RLIMIT_AS`` where the OS enforces it (Linux), and the
trainer survives. It is isolation from accidents, not from an attacker: the code runs as this
user with this machine's files and network (use a remote sandbox for untrusted code at scale).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable

from areal_runtime.infra.sandbox.result import TIMEOUT_EXIT_CODE, RunResult, last_non_empty_line

RUNNERS = {"python": [sys.executable, "-I", "-c"]}


def _limit_memory(max_bytes: int | None) -> Callable[[], None] | None:
    if max_bytes is None or sys.platform == "win32":
        return None

    def apply() -> None:  # runs in the child between fork and exec
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    return apply


class LocalRunner:
    """``run(code)`` in a fresh ``python -I`` process; AReaL's runner interface on one machine.

    ``default_timeout`` (seconds) bounds the wall-clock time of each run: a run that outlives
    it is killed and returns exit code 124. ``memory_limit_mb`` caps the child's address
    space (None: no cap). ``env_vars`` are added to a minimal environment; the working
    directory is a fresh temporary folder per runner, removed by ``close``.
    """

    def __init__(
        self,
        *,
        default_timeout: float = 30,
        memory_limit_mb: int | None = 1024,
        env_vars: dict[str, str] | None = None,
        language: str = "python",
    ) -> None:
        if language not in RUNNERS:
            raise ValueError(f"LocalRunner runs {sorted(RUNNERS)} code, not {language!r}")
        if default_timeout <= 0:
            raise ValueError(f"default_timeout must be > 0 seconds, got {default_timeout}")
        if memory_limit_mb is not None and memory_limit_mb < 64:
            raise ValueError(
                f"memory_limit_mb must be >= 64 (the interpreter alone needs ~30), "
                f"got {memory_limit_mb}"
            )
        self.default_timeout = default_timeout
        self.memory_limit_mb = memory_limit_mb
        self.env_vars = dict(env_vars or {})
        self.language = language
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._closed = False

    def start(self) -> LocalRunner:
        if self._closed:
            raise RuntimeError("LocalRunner is closed")
        if self._workdir is None:
            self._workdir = tempfile.TemporaryDirectory(prefix="areal-sandbox-")
        return self

    def _env(self) -> dict[str, str]:
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        return {**env, "PYTHONDONTWRITEBYTECODE": "1", **self.env_vars}

    def run(
        self,
        code: str,
        *,
        timeout: float | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> RunResult:
        """Run ``code``; output is returned (and passed to the callbacks) when it ends."""
        self.start()
        assert self._workdir is not None
        limit = timeout if timeout is not None else self.default_timeout
        max_bytes = None if self.memory_limit_mb is None else self.memory_limit_mb * 2**20
        proc = subprocess.Popen(
            [*RUNNERS[self.language], code],
            cwd=self._workdir.name,
            env=self._env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, killed whole at the deadline
            preexec_fn=_limit_memory(max_bytes),
        )
        try:
            stdout, stderr = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            message = f"timed out after {limit} s"
            stderr = f"{stderr}{message}\n"
            result = RunResult(stdout, stderr, TIMEOUT_EXIT_CODE, [], message)
        else:
            error = None
            if proc.returncode != 0:
                error = last_non_empty_line(stderr) or _signal_text(proc.returncode)
            result = RunResult(stdout, stderr, proc.returncode, [], error)
        if on_stdout is not None and result.stdout:
            on_stdout(result.stdout)
        if on_stderr is not None and result.stderr:
            on_stderr(result.stderr)
        return result

    async def arun(self, code: str, *, timeout: float | None = None) -> RunResult:
        """``run`` off the event loop, for async tools and workflows."""
        return await asyncio.to_thread(self.run, code, timeout=timeout)

    def close(self) -> None:
        self._closed = True
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def __enter__(self) -> LocalRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the child and anything it started (it leads its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


def _signal_text(returncode: int) -> str:
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return f"killed by {name}" + (" (memory limit?)" if name == "SIGKILL" else "")
    return f"Process exited with code {returncode}"
