# SPDX-License-Identifier: Apache-2.0
"""The sandbox at AReaL's path: local runs are bounded in time and memory; Daytona imports
without its SDK and says what to install when used."""

import asyncio
import importlib.util
import os
import sys
import time

import pytest

from areal_runtime.infra.sandbox import (
    DaytonaClientManager,
    DaytonaRunner,
    DaytonaRunResult,
    LocalRunner,
    RunResult,
)


@pytest.fixture
def runner():
    with LocalRunner(default_timeout=20, memory_limit_mb=256) as r:
        yield r


def test_output_exit_code_and_the_failing_line(runner):
    ok = runner.run("import sys\nprint(6 * 7)\nprint('warn', file=sys.stderr)")
    assert (ok.stdout, ok.stderr, ok.exit_code, ok.error) == ("42\n", "warn\n", 0, None)
    bad = runner.run("x = 1\n1 / 0")
    assert bad.exit_code == 1 and bad.error == "ZeroDivisionError: division by zero"
    assert "Traceback" in bad.stderr
    assert runner.run("import sys; sys.exit(3)").exit_code == 3


def test_a_run_past_its_timeout_is_killed_with_everything_it_started(runner, tmp_path):
    marker = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "while True: time.sleep(0.05)\n"
    )
    start = time.monotonic()
    result = runner.run(code, timeout=2)
    assert time.monotonic() - start < 10
    assert result.exit_code == 124 and result.error == "timed out after 2 s"
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the sandboxed code's own child outlived the timeout")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux only")
def test_memory_beyond_the_limit_fails_the_run_not_the_caller(runner):
    result = runner.run("block = bytearray(1024 * 2**20)\nprint('allocated')")
    assert result.exit_code != 0 and "allocated" not in result.stdout
    assert result.error == "MemoryError"
    assert runner.run("print(len(bytearray(16 * 2**20)))").stdout == "16777216\n"


def test_the_code_sees_a_minimal_environment_and_its_own_folder(runner, monkeypatch):
    monkeypatch.setenv("AREAL_TEST_SECRET", "s3cret")
    out = runner.run("import os; print(os.environ.get('AREAL_TEST_SECRET')); print(os.getcwd())")
    secret, cwd = out.stdout.split()
    assert secret == "None" and os.path.basename(cwd).startswith("areal-sandbox-")
    runner.run("open('state.txt', 'w').write('kept')")  # state persists within one runner
    assert runner.run("print(open('state.txt').read())").stdout == "kept\n"


def test_async_runs_and_callbacks(runner):
    seen = []
    runner.run("print('hi')", on_stdout=seen.append)
    assert seen == ["hi\n"]
    results = asyncio.run(_two(runner))
    assert [r.stdout for r in results] == ["1\n", "2\n"]


async def _two(runner):
    return await asyncio.gather(runner.arun("print(1)"), runner.arun("print(2)"))


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="default_timeout must be > 0"):
        LocalRunner(default_timeout=0)
    with pytest.raises(ValueError, match="memory_limit_mb must be >= 64"):
        LocalRunner(memory_limit_mb=8)
    with pytest.raises(ValueError, match="runs \\['python'\\] code"):
        LocalRunner(language="bash")
    closed = LocalRunner()
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        closed.run("print(1)")


@pytest.mark.skipif(importlib.util.find_spec("daytona") is not None, reason="SDK installed")
def test_remote_classes_import_without_their_sdk_and_say_what_to_install():
    assert DaytonaRunResult is RunResult and DaytonaRunResult().exit_code == 0
    with pytest.raises(ImportError, match=r"pip install daytona.*LocalRunner"):
        DaytonaRunner()
    with pytest.raises(ImportError, match="pip install daytona"):
        asyncio.run(DaytonaClientManager.get_client())
    DaytonaClientManager.configure(api_key="k")
    assert DaytonaClientManager.config_overrides() == {"api_key": "k"}
    DaytonaClientManager.configure()
