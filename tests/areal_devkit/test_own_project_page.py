# SPDX-License-Identifier: Apache-2.0
"""docs/own_project.md, followed as a newcomer follows it: every file written, every command run.

The page's ```sh blocks are run line by line with bash in a fresh folder (the console scripts of
this environment on PATH, this checkout first on PYTHONPATH), its ```LANG file=PATH blocks are
written to PATH, in the page's order; what the page claims about the results is asserted here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from areal_devkit.scaffold.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "own_project.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)


def steps(text: str) -> list[tuple[str, str]]:
    """("file", path + NUL + content) and ("sh", command) in the page's order."""
    out: list[tuple[str, str]] = []
    for lang, info, body in BLOCK.findall(text):
        target = re.search(r"\bfile=(\S+)", info)
        if target:
            out.append(("file", f"{target.group(1)}\0{body}"))
        elif lang == "sh":
            out += [("sh", line) for line in body.splitlines() if line.strip()]
    return out


def test_the_page_is_linked_from_the_readmes_first_screen():
    first_screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:30])
    assert "(docs/own_project.md)" in first_screen


def test_every_variant_has_a_row_in_each_per_variant_table():
    text = PAGE.read_text()
    rows_table = text.split("What each variant reads from a row")[1].split("## 3.")[0]
    rewards_table = text.split("<!-- variant-rewards")[1].split("<!-- /variant-rewards")[0]
    for variant in VARIANTS:
        assert f"`{variant}`" in rows_table, variant
        assert rewards_table.count(f"`{variant}`") == 1, variant


@pytest.mark.slow
def test_every_command_on_the_page_runs_in_a_fresh_project(tmp_path):
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
    }
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    for kind, value in steps(PAGE.read_text()):
        if kind == "file":
            path, content = value.split("\0", 1)
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(content)
            continue
        proc = subprocess.run(
            ["bash", "-c", value], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, f"$ {value}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outputs[value.split()[1] if value.startswith("areal-devkit") else value] = proc

    assert (tmp_path / "tests/test_word_problems_workflow.py").is_file()
    run = outputs["run"].stdout
    # (no assertion on loop stalls: under a loaded CPU any 50 ms of Python can count as one)
    assert "episodes 4  accepted 4  rejected 0" in run, run
    assert "PASS: 4 episodes, 4 passed" in outputs["check"].stdout
    assert (tmp_path / "episodes.html").is_file()
    # The page says: these word problems mostly fail on the embedded model (the apples are
    # right, the eggs by luck), and train says why when a step has nothing to learn from.
    mean = float(re.search(r"reward mean (\d\.\d+)", run).group(1))
    assert mean <= 0.5, run
    train = outputs["train"]
    assert "0 episodes rejected" in train.stdout, train.stdout
    if "no reward variance" in train.stdout:
        assert "every sample of each prompt got the same reward" in train.stderr
        assert "Likely: " in train.stderr  # the cause, by the flat reward's value

    # "Add them to the agent's tools": the edited agent still lints clean and passes its tests.
    module = tmp_path / "myproj/word_problems.py"
    text = module.read_text()
    assert "tools=[add]" in text
    text = text.replace("tools=[add]", "tools=[add, multiply, subtract]")
    text = text.replace(
        "from areal_runtime.api.reward_api",
        "from myproj.word_problems_tools import multiply, subtract\n"
        "from areal_runtime.api.reward_api",
    )
    module.write_text(text)
    for cmd in (
        ["areal-lint", "myproj"],
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
    ):
        proc = subprocess.run(
            cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # ... and a blocking call in the async tool is reported, as the page says.
    tools = tmp_path / "myproj/word_problems_tools.py"
    tools.write_text(
        tools.read_text().replace("await asyncio.sleep(0)", "import time; time.sleep(1)")
    )
    lint = subprocess.run(
        ["areal-lint", "myproj"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (
        lint.returncode == 1 and "ARL110" in lint.stdout and "word_problems_tools.py" in lint.stdout
    )
