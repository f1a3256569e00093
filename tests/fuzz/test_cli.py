# SPDX-License-Identifier: Apache-2.0
"""Hostile arguments and files for ``areal-devkit`` and ``areal-lint``.

Run in-process through ``main(argv)`` to stay fast, plus a few real subprocesses. Whatever
they get: exit 0, 1 with findings, or 2 with a usage/error message; never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from areal_devkit.cli import main as devkit_main
from areal_lint.cli import main as lint_main

from .strategies import examples

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow"
PYTHON = (ROOT / "areal_lint" / "cli.py").read_text(encoding="utf-8")


@contextlib.contextmanager
def _in(directory: Path) -> Iterator[None]:
    """Run from ``directory`` and undo what ``main`` does to the process (cwd, sys.path)."""
    old_cwd, old_path = os.getcwd(), list(sys.path)
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path


def call(main: Callable[[Sequence[str]], int], argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``main(argv)`` as the console script runs it: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with _in(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def assert_clean_exit(code: int, out: str, err: str) -> None:
    """0, 1 with findings, or 2 with a message; no traceback anywhere."""
    assert "Traceback (most recent call last)" not in out + err, out + err
    assert code in (0, 1, 2), (code, out, err)
    if code == 2:
        assert "usage:" in err or "error:" in err, err


# --- regression tests: each finding of the fuzz suite, as a plain example ---------------------


@pytest.mark.parametrize(
    ("name", "content", "argv"),
    [
        ("bad.pt", b"\x80\x03garbage", []),  # UnpicklingError traceback
        ("empty.pt", b"", []),  # EOFError traceback
        ("odd.jsonl", b'{"episode": {}}\n', []),  # int({}): TypeError with no line number
        ("bad.jsonl", b'{"input_ids": "x"}\n', []),
        ("ok.jsonl", b"{}\n", ["--tokenizer", "hf:/nonexistent"]),  # OSError traceback
    ],
)
def test_view_refuses_bad_files_with_exit_2(
    tmp_path: Path, name: str, content: bytes, argv: list[str]
) -> None:
    (tmp_path / name).write_bytes(content)
    code, out, err = call(devkit_main, ["view", name, *argv], tmp_path)
    assert_clean_exit(code, out, err)
    assert code == 2 and "areal-devkit view: error:" in err


@pytest.mark.parametrize(
    "source", [b"def f(:\n", b"\xff\xfe\x00", b"x = (\n"], ids=["syntax", "bytes", "truncated"]
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_broken_workflow_file_is_exit_2_with_its_line(
    tmp_path: Path, command: str, source: bytes
) -> None:
    """Found: a SyntaxError in the user's workflow file was a traceback (exit 1)."""
    (tmp_path / "wf.py").write_bytes(source)
    code, out, err = call(devkit_main, [command, "wf.py:W", "--engine", "scripted"], tmp_path)
    assert_clean_exit(code, out, err)
    assert code == 2 and "wf.py:" in err


@pytest.mark.parametrize(
    "flags",
    [
        ["--max-new-tokens", "-5"],
        ["--max-new-tokens", "0"],
        ["--temperature", "nan"],
        ["--temperature", "-1"],
        ["--temperature", "inf"],
    ],
)
def test_bad_sampling_flags_are_exit_2_before_any_episode(tmp_path: Path, flags: list[str]) -> None:
    """Found: every episode failed (exit 1), or NaN temperature ran; now a usage error."""
    argv = ["run", WORKFLOW, "--engine", "scripted", "--limit", "1", *flags]
    code, out, err = call(devkit_main, argv, ROOT)
    assert code == 2 and flags[0] in err, (out, err)


# --- properties -------------------------------------------------------------------------------

truncated_python = st.integers(0, len(PYTHON)).map(lambda n: PYTHON[:n].encode())
file_contents = st.one_of(
    st.binary(max_size=400),
    truncated_python,
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(1, 200_000).map(lambda n: b"x = '" + b"a" * n + b"'\n"),  # huge lines
    st.just(b"async def arun_episode(self, engine, data):\n    import time; time.sleep(1)\n"),
    st.just(b"\x00" * 10),
)
LINT_FLAGS = st.lists(
    st.sampled_from(
        ["--fix", "--diff", "--unsafe-fixes", "--format", "json", "text", "--select", "ARL1",
         "--ignore", "ARL", "--exclude", "*.py", "--jobs", "0", "-1", "--arl-enable", "ARL901",
         "--arl-reward-name-regex", "(", "--arl-blocking-calls", "a->", "--bogus", "-", ""]
    ),
    max_size=4,
)  # fmt: skip


@settings(max_examples=examples(60))
@given(file_contents, LINT_FLAGS)
def test_areal_lint_on_any_file_never_crashes(content: bytes, flags: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "target.py").write_bytes(content)
        code, out, err = call(lint_main, ["target.py", *flags], Path(tmp))
    assert_clean_exit(code, out, err)
    if code == 1 and "--format" not in flags:
        assert "target.py:" in out, out


DEVKIT_WORDS = st.sampled_from(
    ["new", "run", "check", "view", "--engine", "scripted", "bogus:1", "--data", "data.jsonl",
     "--kwargs", "{", "[]", '{"x": 1}', "--limit", "0", "-3", "--group-size", "--concurrency",
     "--max-new-tokens", "--temperature", "nan", "--output", "out.txt", "nodir/o.jsonl",
     "--html", "--show", "--tokenizer", "hf:", "none", "-o", "x.py:W", "wf.py:W", "os:path",
     WORKFLOW, "traj.jsonl", "traj.pt", "--repo", ".", "--package", "a..b", "--class-name",
     "lower", "--variant", "--help", "--version", "\x00", "é"]
)  # fmt: skip


@settings(max_examples=examples(60))
@given(st.lists(st.one_of(DEVKIT_WORDS, st.text(max_size=8)), max_size=6), file_contents)
def test_areal_devkit_with_any_arguments_never_crashes(argv: list[str], content: bytes) -> None:
    argv = [a.replace("\x00", "") for a in argv]  # argv can hold no NUL
    if "run" in argv[:1] or "check" in argv[:1]:
        argv += ["--limit", "1", "--engine", "scripted"]  # bounded: one scripted episode
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("data.jsonl", "wf.py", "traj.jsonl", "traj.pt"):
            (Path(tmp) / name).write_bytes(content)
        code, out, err = call(devkit_main, argv, Path(tmp))
    assert_clean_exit(code, out, err)


# --- real processes: the console scripts' exit codes and stderr -------------------------------


def _script(name: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    module = {"areal-devkit": "areal_devkit.cli", "areal-lint": "areal_lint.cli"}[name]
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("script", "argv", "code"),
    [
        ("areal-lint", ["nonutf.py"], 1),
        ("areal-lint", ["--format", "yaml", "nonutf.py"], 2),
        ("areal-lint", ["missing.py"], 2),
        ("areal-devkit", ["view", "bad.pt"], 2),
        ("areal-devkit", ["run"], 2),
        ("areal-devkit", ["nope"], 2),
    ],
)
def test_console_scripts_exit_cleanly(
    tmp_path: Path, script: str, argv: list[str], code: int
) -> None:
    (tmp_path / "nonutf.py").write_bytes(b"\xff\xfe x = 1\n")
    (tmp_path / "bad.pt").write_bytes(b"\x80\x03garbage")
    done = _script(script, *argv, cwd=tmp_path)
    assert_clean_exit(done.returncode, done.stdout, done.stderr)
    assert done.returncode == code, (done.stdout, done.stderr)
    if code == 1:
        assert json.dumps("nonutf.py")[1:-1] in done.stdout
