# SPDX-License-Identifier: Apache-2.0
"""The content cache: a file whose text and settings did not change is not linted again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import areal_lint.cli as cli
from areal_lint.cache import DIR_NAME, ENV_DIR

BAD = "import time\n\n\nasync def f():\n    time.sleep(1)\n    open('x')\n"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_DIR)  # the cache goes where users get it: next to pyproject.toml
    (tmp_path / "pyproject.toml").write_text("[tool.areal-lint]\nselect = ['ARL']\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(BAD)
    (tmp_path / "pkg" / "b.py").write_text(BAD.replace("open('x')", "pass"))
    return tmp_path


@pytest.fixture
def linted(monkeypatch):
    """The files ``lint_source`` actually ran on."""
    seen: list[str] = []
    real = cli.lint_source

    def counting(source, filename, options):
        seen.append(Path(filename).name)
        return real(source, filename, options)

    monkeypatch.setattr(cli, "lint_source", counting)
    return seen


def _run(capsys, *argv):
    code = cli.main([*argv, "--format", "json", "--jobs", "1"])
    return code, sorted(
        (Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(capsys.readouterr().out)
    )


def test_a_second_run_reads_the_cache_and_reports_the_same(project, capsys, linted):
    first = _run(capsys, str(project / "pkg"))
    assert sorted(linted) == ["a.py", "b.py"]
    linted.clear()
    assert _run(capsys, str(project / "pkg")) == first == (
        1, [("a.py", 5, "ARL110"), ("a.py", 6, "ARL101"), ("b.py", 5, "ARL110")]
    )  # fmt: skip
    assert linted == []
    cache = project / DIR_NAME
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not list(cache.rglob("*.tmp"))


def test_a_file_with_nothing_to_parse_is_cleared_without_the_cache(project, capsys, linted):
    """No ``async def``: the text check answers before any hash, look-up or write (in AReaL's
    tree 325 of 401 files; their entries cost a cold run about 0.3 s)."""
    (project / "pkg" / "plain.py").write_text("import time\n\n\ndef f():\n    time.sleep(1)\n")
    first = _run(capsys, str(project / "pkg"))
    assert sorted(linted) == ["a.py", "b.py"]
    assert len(list((project / DIR_NAME).rglob("*.json"))) == 2  # a.py's and b.py's findings
    linted.clear()
    assert _run(capsys, str(project / "pkg")) == first and linted == []


def test_changed_content_or_settings_lint_again(project, capsys, linted):
    _run(capsys, str(project / "pkg"))
    (project / "pkg" / "b.py").write_text(BAD.replace("open('x')", "open('y')"))
    linted.clear()
    assert _run(capsys, str(project / "pkg"))[1].count(("b.py", 6, "ARL101")) == 1
    assert linted == ["b.py"]
    (project / "pkg" / "c.py").write_text(BAD)  # a copy of a.py: same content, a hit
    linted.clear()
    assert ("c.py", 6, "ARL101") in _run(capsys, str(project / "pkg"))[1] and linted == []
    linted.clear()
    (project / "pkg" / "c.py").unlink()
    assert _run(capsys, str(project / "pkg"), "--ignore", "ARL110") == (
        1, [("a.py", 6, "ARL101"), ("b.py", 6, "ARL101")]
    )  # fmt: skip
    assert sorted(linted) == ["a.py", "b.py"]
    linted.clear()
    _run(capsys, str(project / "pkg"), "--arl-blocking-calls", "x.y")
    assert sorted(linted) == ["a.py", "b.py"]


def test_no_cache_flag_and_setting_write_nothing(project, capsys, linted):
    _run(capsys, str(project / "pkg"), "--no-cache")
    assert not (project / DIR_NAME).exists()
    (project / "pyproject.toml").write_text("[tool.areal-lint]\ncache = false\n")
    _run(capsys, str(project / "pkg"))
    _run(capsys, str(project / "pkg"))
    assert not (project / DIR_NAME).exists() and len(linted) == 6
    (project / "pyproject.toml").write_text("[tool.areal-lint]\ncache = 'no'\n")
    assert cli.main([str(project / "pkg")]) == 2
    assert "cache must be true or false" in capsys.readouterr().err


def test_fix_and_diff_never_use_the_cache(project, capsys, linted):
    _run(capsys, str(project / "pkg"))
    linted.clear()
    assert cli.main([str(project / "pkg"), "--diff", "--unsafe-fixes", "--jobs", "1"]) == 1
    assert sorted(linted) == ["a.py", "b.py"]


def test_a_damaged_entry_is_a_miss_and_a_read_only_cache_is_skipped(project, capsys, linted):
    first = _run(capsys, str(project / "pkg"))
    for entry in (project / DIR_NAME).rglob("*.json"):
        entry.write_text("[{trunc")
    linted.clear()
    assert _run(capsys, str(project / "pkg")) == first and len(linted) == 2
    blocked = project / "blocked"
    blocked.write_text("a file where the cache folder should be")
    linted.clear()
    assert _run(capsys, str(project / "pkg"), "--cache-dir", str(blocked / "c")) == first


def test_concurrent_runs_share_one_cache_safely(tmp_path):
    """Several processes writing the same entries at once: each run is right, every entry whole."""
    for i in range(40):
        (tmp_path / f"m{i}.py").write_text(BAD + f"\n\nasync def g{i}():\n    time.sleep({i})\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT), ENV_DIR: str(cache)}
    command = [sys.executable, "-m", "areal_lint.cli", "--config", "none", "--format", "json",
               "--jobs", "1", str(tmp_path)]  # fmt: skip
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(4)
    ]
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(out == outputs[0] for out in outputs) and len(outputs[0]) == 120
    for entry in cache.rglob("*.json"):
        json.loads(entry.read_text())
    assert not list(cache.rglob("*.tmp"))
    warm = subprocess.run(command, env=env, capture_output=True, text=True)
    assert json.loads(warm.stdout) == outputs[0]
