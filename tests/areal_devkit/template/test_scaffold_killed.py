# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit new`` killed with SIGKILL at many points: never a half-written repository."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from areal_devkit.scaffold import JOURNAL, finish_interrupted
from areal_devkit.scaffold.init_editor import exported_names

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "examples" / "seed_projects" / "lazy_project"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def state(repo: Path) -> str:
    """``unchanged``, ``complete``, or a description of the half-written state."""
    init = repo / "myproj/workflow/__init__.py"
    module = repo / "myproj/workflow/calc.py"
    test = repo / "tests/test_calc_workflow.py"
    registered = "CalcWorkflow" in exported_names(init.read_text())
    present = (module.exists(), test.exists(), registered)
    if present == (False, False, False) and init.read_text() == (SEED / "myproj/workflow/__init__.py").read_text():
        return "unchanged"
    if present == (True, True, True):
        compile(module.read_text(), str(module), "exec")
        compile(test.read_text(), str(test), "exec")
        return "complete"
    return f"half-written: module={present[0]} test={present[1]} registered={present[2]}"


@pytest.mark.slow
def test_sigkill_at_any_point_leaves_it_unchanged_or_complete(tmp_path):
    cmd = [sys.executable, "-m", "areal_devkit", "new", "calc", "--package", "myproj.workflow"]
    shutil.copytree(SEED, tmp_path / "timing")
    start = time.perf_counter()
    subprocess.run([*cmd, "--repo", str(tmp_path / "timing")], env=ENV, timeout=120, check=True, capture_output=True)
    full = time.perf_counter() - start  # how long an uninterrupted run takes here
    seen = {}
    for step in range(14):
        repo = tmp_path / f"repo{step}"
        shutil.copytree(SEED, repo)
        proc = subprocess.Popen([*cmd, "--repo", str(repo)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:  # kills spread over the whole run; the last run is never killed
            proc.wait(timeout=full * step / 12 if step < 13 else 120)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        if (repo / JOURNAL).exists():
            assert finish_interrupted(repo)  # the next areal-devkit new finishes the moves
        result = state(repo)
        assert result in ("unchanged", "complete"), (step, result)
        # The killed process's hook children (ruff) may still write into the staging folder
        # for a moment; the next run removes it, so cleaning up must converge quickly.
        deadline = time.monotonic() + 10
        while list(repo.glob(".areal-devkit-*")) and time.monotonic() < deadline:
            finish_interrupted(repo)
            time.sleep(0.1)
        assert not list(repo.glob(".areal-devkit-*")), "staging or journal left behind"
        assert state(repo) == result
        seen[result] = seen.get(result, 0) + 1
    assert seen.get("unchanged") and seen.get("complete"), seen
