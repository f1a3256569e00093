# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``examples/openclaw`` (online mode), taken from the pinned release at test time, run
against this repository: its client scripts against ``areal-devkit serve`` unchanged, and its
``train.py`` (``areal`` renamed to ``areal_runtime``, laptop-sized by overrides only) training
on the sessions its ``demo_lifecycle.py`` runs through the trainer's gateway."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .areal_release import release_tree, renamed

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "sk-test123456"  # the admin key in openclaw's config.yaml
SCRIPTS = ("start_session.py", "set_reward.py", "demo_lifecycle.py", "_fmt.py", "config.yaml")
LAPTOP = [
    "actor.path=default",  # the embedded model
    "total_train_steps=2",
    "total_train_epochs=1",
    "train_dataset.batch_size=2",
]


class Process:
    """A child process whose merged output is read line by line without blocking."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError("exited early:\n" + "".join(self.lines))
            self.lines.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        raise AssertionError(f"no line matching {pattern!r}:\n" + "".join(self.lines))

    def finish(self, timeout: float = 120) -> str:
        self.proc.wait(timeout=timeout)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return "".join(self.lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def openclaw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's openclaw folder: client scripts as they are, train.py renamed."""
    source = release_tree() / "examples" / "openclaw"
    folder = tmp_path_factory.mktemp("openclaw")
    for name in SCRIPTS:
        (folder / name).write_text((source / name).read_text())
    (folder / "train.py").write_text(renamed((source / "train.py").read_text()))
    return folder


def script(folder: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, name, *args], cwd=folder, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, Process, Path]]:
    output = tmp_path / "sessions.jsonl"
    cmd = [sys.executable, "-m", "areal_devkit", "serve", "--port", "0", "--save-every", "0"]
    server = Process([*cmd, "--admin-key", ADMIN, "--output", str(output)], ROOT)
    try:
        url = server.wait_for(r"Anthropic base URL\s+(\S+)").group(1)
        server.wait_for("one line per request follows")
        yield url, server, output
    finally:
        server.kill()


def test_openclaw_client_scripts_run_unchanged_against_serve(openclaw: Path, serve) -> None:
    import json

    import requests

    url, _, output = serve
    started = script(openclaw, "start_session.py", url, "--admin-key", ADMIN)
    assert started.returncode == 0, started.stdout + started.stderr
    key = re.search(r"SESSION_API_KEY=(\S+)", started.stderr).group(1)
    first_id = re.search(r"SESSION_ID=(\S+)", started.stderr).group(1)
    chat = requests.post(
        f"{url}/chat/completions",
        json={"model": "Qwen/Qwen3-0.6B", "messages": [{"role": "user", "content": "2+2?"}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    assert chat.status_code == 200 and chat.json()["model"] == "Qwen/Qwen3-0.6B"
    rewarded = script(openclaw, "set_reward.py", url, "--api-key", key, "--reward", "1.0")
    assert rewarded.returncode == 0, rewarded.stdout + rewarded.stderr

    refreshed = script(openclaw, "start_session.py", url, "--admin-key", ADMIN, "--api-key", key)
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    assert f"SESSION_API_KEY={key}" in refreshed.stderr  # same key, new session
    assert f"SESSION_ID={first_id}" not in refreshed.stderr
    # The refresh ended the old session and exported it: it is in the trajectory file now.
    written = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(s["session_id"], s["reward"]) for s in written] == [(first_id, 1.0)]

    demo = script(openclaw, "demo_lifecycle.py", url, "--admin-key", ADMIN, "--episodes", "2")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Demo Complete" in demo.stdout


def test_openclaw_train_py_trains_on_sessions_outside_clients_run(
    openclaw: Path, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "train.py", "--config", "config.yaml", *LAPTOP]
    trainer = Process([*cmd, f"cluster.fileroot={tmp_path}"], openclaw, env)
    try:
        gateway = trainer.wait_for(r"Proxy gateway available at (\S+)", 300).group(1)
        # Five episodes with one key: each refresh ends the one before, so four are handed to
        # the trainer, two batches of two.
        demo = script(
            openclaw, "demo_lifecycle.py", gateway, "--admin-key", ADMIN, "--episodes", "5"
        )
        assert demo.returncode == 0, demo.stdout + demo.stderr
        log = trainer.finish(timeout=300)
    finally:
        trainer.kill()
    assert trainer.proc.returncode == 0, log
    steps = re.findall(r"^\s+(\d)/2\s+\S+\s+(-?[\d.]+)", log, flags=re.M)
    assert [(step, float(reward)) for step, reward in steps] == [("1", 1.0), ("2", 1.0)], log
