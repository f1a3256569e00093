# SPDX-License-Identifier: Apache-2.0
"""The reward each scaffolded variant starts at and reaches on the embedded model, untouched.

For each variant: scaffold it into a fresh project (``areal-devkit new``), then
``areal-devkit train`` it with no --data and no --kwargs (the bundled arithmetic task from the
under-confident start), and read the per-step reward from ``--metrics-out``. Prints a Markdown
table for BENCHMARKS.md; ``--write`` also puts the figures where users read them: the table in
docs/own_project.md ("what reward to expect"), the README's tour table and each generated
test's docstring (``tests/areal_devkit/test_reward_figures.py`` keeps the three equal).

    python benchmarks/bench_variant_rewards.py [--steps 20] [--variants rlvr,agent_openai] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from areal_devkit.scaffold.variants import VARIANTS  # noqa: E402
from benchmarks._util import table  # noqa: E402

EDGE_STEPS = 5  # "starts at" and "reaches" are means over this many steps


def train_variant(variant: str, steps: int, work: Path) -> list[object]:
    project = work / variant
    (project / "proj").mkdir(parents=True)
    (project / "proj" / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{project}", "OMP_NUM_THREADS": "1"}
    cli = [sys.executable, "-m", "areal_devkit"]
    subprocess.run(
        [*cli, "new", "task", "--variant", variant, "--package", "proj"],
        cwd=project, env=env, check=True, capture_output=True,
    )  # fmt: skip
    module = (project / "proj" / "task.py").read_text()
    class_name = re.search(r"^class (\w+)", module, re.M).group(1)
    spec = f"proj.task:{class_name}"
    metrics = project / "m.jsonl"
    # agent_claude starts the Claude Code CLI per episode: a smaller batch (as CI trains it).
    small = ["--batch-size", "1", "--group-size", "2"] if variant == "agent_claude" else []
    start = time.perf_counter()
    proc = subprocess.run(
        [*cli, "train", spec, "--steps", str(steps), "--quiet", "--metrics-out", str(metrics), *small],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return [variant, "failed", proc.stderr.strip().splitlines()[-1:], "", f"{seconds:.0f}"]
    rewards = [json.loads(line)["reward_mean"] for line in metrics.read_text().splitlines()]
    flat = [
        json.loads(line).get("groups_with_reward_variance", 1) == 0
        for line in metrics.read_text().splitlines()
    ]
    head, tail = rewards[:EDGE_STEPS], rewards[-EDGE_STEPS:]
    return [
        f"`{variant}`",
        f"{sum(head) / len(head):.3f}",
        f"{sum(tail) / len(tail):.3f}",
        f"{sum(flat)} of {len(rewards)}",
        f"{seconds:.0f}",
    ]


def write_figures(rows: list[list[object]]) -> None:
    """The measured figures into the page, the README and the test templates."""
    from benchmarks.reward_figures import replace_figures

    measured = {str(r[0]).strip("`"): (str(r[1]), str(r[2]), str(r[3])) for r in rows}
    for path in replace_figures(ROOT, measured):
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--write", action="store_true", help="update the docs and templates")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            rows.append(train_variant(variant, args.steps, Path(tmp)))
            print(rows[-1], file=sys.stderr, flush=True)
    print(
        f"{args.steps} steps each, default flags, reward = mean of the first/last {EDGE_STEPS} steps"
    )
    print(
        table(["variant", "starts at", "reaches", "steps with no reward variance", "seconds"], rows)
    )
    if args.write:
        write_figures([r for r in rows if r[1] != "failed"])


if __name__ == "__main__":
    main()
