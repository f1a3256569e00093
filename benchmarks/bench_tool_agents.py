# SPDX-License-Identifier: Apache-2.0
"""Tool agents learning on the embedded model: ``areal-devkit train --steps 50``, no other flags.

For the ``agent_openai_agents`` and ``agent_anthropic`` template variants (scaffolded into a
temporary project) and the runtime's mirror of AReaL's ``MathToolAgent``: train's own reward
summary (mean of the first 5 steps vs the last 5), the rise, the wall time of the command and
the load average around it. One run after another, one torch thread each (train's default).

    PYTHONPATH=. python benchmarks/bench_tool_agents.py [--steps 50] [--only anthropic]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {
    "openai_agents": ("agent_openai_agents", "myproj.workflow.calc:CalcAgent"),
    "anthropic": ("agent_anthropic", "myproj.workflow.calc:CalcAgent"),
    "math_tool_agent": (None, "areal_runtime.workflow.openai.math_agent:MathToolAgent"),
}


def scaffold(project: Path, variant: str) -> None:
    shutil.copytree(ROOT / "examples" / "seed_projects" / "lazy_project", project)
    subprocess.run(
        [sys.executable, "-m", "areal_devkit", "new", "calc", "--variant", variant,
         "--package", "myproj.workflow"],
        cwd=project, check=True, capture_output=True, env=_env(project),
    )  # fmt: skip


def _env(project: Path) -> dict[str, str]:
    path = os.pathsep.join([str(project), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def train_once(name: str, steps: int, keep: Path | None) -> dict:
    variant, workflow = VARIANTS[name]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        if variant:
            scaffold(project, variant)
        else:
            project.mkdir()
        metrics = Path(tmp) / "metrics.jsonl"
        cmd = [sys.executable, "-m", "areal_devkit", "train", workflow, "--steps", str(steps),
               "--metrics-out", str(metrics), "--quiet"]  # fmt: skip
        if keep is not None:
            cmd += ["--plot", str(keep / f"{name}.png"), "--output", str(keep / f"{name}.jsonl")]
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=project, env=_env(project), capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{name}: train failed\n{done.stderr[-3000:]}")
        rewards = [json.loads(line)["reward_mean"] for line in metrics.read_text().splitlines()]
        if keep is not None:
            shutil.copy(metrics, keep / f"{name}.metrics.jsonl")
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    return {
        "name": name,
        "first5": first,
        "last5": last,
        "rise": last - first,
        "wall_s": wall,
        "load": (load_before + os.getloadavg()[0]) / 2,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--only", choices=sorted(VARIANTS), action="append")
    parser.add_argument("--keep", type=Path, help="write plots, metrics and trajectories here")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print("| agent | first 5 steps | last 5 steps | rise | wall s | load avg |")
    print("|---|---|---|---|---|---|")
    for name in args.only or list(VARIANTS):
        r = train_once(name, args.steps, args.keep)
        print(
            f"| {r['name']} | {r['first5']:.3f} | {r['last5']:.3f} | {r['rise']:+.3f} | "
            f"{r['wall_s']:.0f} | {r['load']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
