# SPDX-License-Identifier: Apache-2.0
"""flake8-async's and ruff's codes read as the ARL codes for the same checks (aliases.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from areal_lint.aliases import ALIASES
from areal_lint.cli import main
from areal_lint.rules import RULES_BY_CODE

# One line per construct both tools check; ruff and flake8-async agree on these codes.
CONSTRUCTS = """\
import asyncio
import os
import subprocess
import time

import requests


async def episode(path, tasks):
    with open(path) as f:
        text = f.read()
    requests.get("http://x")
    subprocess.run(["ls"])
    time.sleep(1)
    asyncio.create_task(episode(path, tasks))
    return text
"""


def _findings(capsys, *args):
    code = main(["--config", "none", "--format", "json", *args])
    out = capsys.readouterr()
    return code, {(f["line"], f["code"]) for f in json.loads(out.out)}, out.err


def test_every_alias_names_an_arl_rule():
    for other, (arl, what) in ALIASES.items():
        assert arl in RULES_BY_CODE and what, other


def _ruff() -> str | None:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff (a dev dependency) is not installed")
def test_ruffs_code_on_each_line_maps_to_the_arl_code_reported_there(tmp_path, capsys):
    """The table agrees with ruff itself: where ruff reports ASYNCnnn, areal-lint reports the
    ARL code the table gives for it, on the same line."""
    path = tmp_path / "episode.py"
    path.write_text(CONSTRUCTS)
    proc = subprocess.run(
        [_ruff(), "check", "--isolated", "--no-cache", "--select", "ASYNC,RUF006",
         "--output-format", "json", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    theirs = {(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)}
    assert len(theirs) >= 4, proc.stdout + proc.stderr
    _, ours, _ = _findings(capsys, str(path))
    assert {(line, ALIASES[code][0]) for line, code in theirs} <= ours


def test_noqa_with_their_code_silences_ours(tmp_path, capsys):
    path = tmp_path / "episode.py"
    path.write_text(
        CONSTRUCTS.replace("open(path) as f:", "open(path) as f:  # noqa: ASYNC230")
        .replace("time.sleep(1)", "time.sleep(1)  # noqa: ASYNC251")
        .replace("create_task(episode(path, tasks))", "create_task(episode(path, tasks))  # noqa: RUF006")
    )  # fmt: skip
    _, found, _ = _findings(capsys, str(path))
    assert found == {(12, "ARL120"), (13, "ARL111")}


def test_flake8_honours_noqa_with_their_code(tmp_path):
    path = tmp_path / "episode.py"
    path.write_text(CONSTRUCTS.replace("open(path) as f:", "open(path) as f:  # noqa: ASYNC230"))
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=ARL", "--format=%(row)d:%(code)s", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert sorted(proc.stdout.split()) == ["12:ARL120", "13:ARL111", "14:ARL110", "15:ARL204"]


def test_select_and_ignore_read_their_codes_with_a_note(tmp_path, capsys):
    path = tmp_path / "episode.py"
    path.write_text(CONSTRUCTS)
    _, found, err = _findings(capsys, str(path), "--ignore", "ASYNC230,ASYNC22")
    assert found == {(12, "ARL120"), (14, "ARL110"), (15, "ARL204")}
    assert "ASYNC230 (flake8-async/ruff) is read as ARL101" in err
    assert "ASYNC22 (flake8-async/ruff) is read as ARL111" in err
    _, found, err = _findings(capsys, str(path), "--select", "ASYNC251")
    assert found == {(14, "ARL110")}
    code, found, err = _findings(capsys, str(path), "--select", "ASYNC910")
    assert (code, found) == (0, set()) and "ASYNC910 (flake8-async/ruff) has no ARL rule" in err
    _, found, err = _findings(capsys, str(path), "--select", "ARL1")
    assert err == "" and {c for _, c in found} == {"ARL101", "ARL120", "ARL111", "ARL110"}


def test_per_file_ignores_in_pyproject_read_their_codes(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.areal-lint.per-file-ignores]\n"episode.py" = ["ASYNC251", "RUF006"]\n'
    )
    path = tmp_path / "episode.py"
    path.write_text(CONSTRUCTS)
    assert main([str(path), "--format", "json"]) == 1
    out = capsys.readouterr()
    assert {f["code"] for f in json.loads(out.out)} == {"ARL101", "ARL120", "ARL111"}
    assert "RUF006 (flake8-async/ruff) is read as ARL204" in out.err


def test_the_note_is_shown_the_first_time_only(tmp_path, capsys):
    """A pre-commit hook runs on every commit: the note is for the first run, not every one."""
    path = tmp_path / "episode.py"
    path.write_text(CONSTRUCTS)
    assert "ASYNC230 (flake8-async/ruff)" in _findings(capsys, str(path), "--ignore", "ASYNC230")[2]
    assert _findings(capsys, str(path), "--ignore", "ASYNC230")[2] == ""
    assert "ASYNC251" in _findings(capsys, str(path), "--ignore", "ASYNC230,ASYNC251")[2]
    with_no_cache = _findings(capsys, str(path), "--ignore", "ASYNC230", "--no-cache")[2]
    assert "ASYNC230 (flake8-async/ruff) is read as ARL101" in with_no_cache  # nowhere to remember
