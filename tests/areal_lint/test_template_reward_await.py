# SPDX-License-Identifier: Apache-2.0
"""The docs' own ARL402 example on the code users start from: every generated workflow variant,
with the ``await`` before ``self.async_reward_fn(...)`` deleted, is reported by ``areal-lint``
and by ``flake8 --select=ARL`` (issue 22: the value was stored, then returned in a dict or put in
a tensor, and nothing was reported)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed_projects" / "lazy_project"
BIN = Path(sys.executable).parent
VARIANTS = [
    "rlvr",
    "multi_turn",
    "agent_openai",
    "vision",
    "agent_openai_agents",
    "agent_anthropic",
]
AWAITED_REWARD = re.compile(r"await (self\.async_reward_fn\()")


@pytest.fixture(scope="module")
def unawaited_workflows(tmp_path_factory) -> dict[str, Path]:
    project = tmp_path_factory.mktemp("seed") / "project"
    shutil.copytree(SEED, project)
    files = {}
    for variant in VARIANTS:
        name = f"wf_{variant}"
        subprocess.run(
            [str(BIN / "areal-devkit"), "new", name, "--variant", variant,
             "--package", "myproj.workflow"],
            cwd=project, check=True, capture_output=True,
        )  # fmt: skip
        path = project / "myproj" / "workflow" / f"{name}.py"
        source = path.read_text()
        assert AWAITED_REWARD.search(source), f"{variant}: the template no longer awaits the reward"
        path.write_text(AWAITED_REWARD.sub(r"\1", source))
        files[variant] = path
    return files


def test_areal_lint_reports_each_variant(unawaited_workflows):
    paths = [str(p) for p in unawaited_workflows.values()]
    proc = subprocess.run(
        [str(BIN / "areal-lint"), "--config", "none", "--format", "json", *paths],
        capture_output=True, text=True,
    )  # fmt: skip
    findings = json.loads(proc.stdout)
    reported = {Path(f["path"]).name for f in findings if f["code"] == "ARL402"}
    assert reported == {p.name for p in unawaited_workflows.values()}, proc.stdout


def test_flake8_reports_each_variant(unawaited_workflows):
    paths = [str(p) for p in unawaited_workflows.values()]
    proc = subprocess.run(
        [str(BIN / "flake8"), "--select=ARL", *paths], capture_output=True, text=True
    )
    reported = {
        Path(line.split(":")[0]).name for line in proc.stdout.splitlines() if "ARL402" in line
    }
    assert reported == {p.name for p in unawaited_workflows.values()}, proc.stdout + proc.stderr
