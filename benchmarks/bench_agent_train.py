# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit train`` on the ``agent_claude`` variant, prefix cache on and off, s/step.

Bakes the variant into a copy of the lazy seed project (``examples/seed_projects``), then runs
``train`` on it twice in child processes, once as shipped and once with the local engine's
prefix cache off (``prefix_cache_bytes=0``), and reads each step's ``step_seconds`` from
``--metrics-out``. Each episode starts the Claude Code CLI (the Claude Agent SDK), so this needs
the ``agents`` extra. Run:
``PYTHONPATH=. python benchmarks/bench_agent_train.py [--batch-size 8 --group-size 8 --steps 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = "myproj.workflow.my_claude:MyClaudeAgent"


def bake(folder: Path) -> Path:
    repo = folder / "repo"
    shutil.copytree(ROOT / "examples/seed_projects/lazy_project", repo)
    subprocess.run(
        [sys.executable, "-m", "areal_devkit", "new", "my_claude", "--variant", "agent_claude",
         "--package", "myproj.workflow"],
        cwd=repo, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return repo


def child(cache: str, argv: list[str]) -> int:
    """Run ``areal-devkit train`` in this process, with the prefix cache off if asked."""
    from areal_devkit.cli import main
    from areal_runtime.engine.local import LocalEngine

    if cache == "off":
        LocalEngine.__init__.__kwdefaults__["prefix_cache_bytes"] = 0
    return main(argv)


def run(repo: Path, cache: str, args: argparse.Namespace) -> tuple[list[float], str]:
    metrics = repo / f"metrics-{cache}.jsonl"
    argv = [
        "train", SPEC, "--steps", str(args.steps), "--batch-size", str(args.batch_size),
        "--group-size", str(args.group_size), "--quiet", "--metrics-out", str(metrics),
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, __file__, "--child", cache, "--", *argv],
        cwd=repo, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{repo}"},
    )  # fmt: skip
    if proc.returncode:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
    steps = [json.loads(x)["step_seconds"] for x in metrics.read_text().splitlines()]
    cache_line = next((x for x in proc.stdout.splitlines() if x.startswith("prefix cache")), "")
    return steps, cache_line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        sys.exit(child(args.child, [a for a in rest if a != "--"]))
    print(f"batch {args.batch_size} x group {args.group_size}, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        repo = bake(Path(folder))
        for cache in ("on", "off"):
            steps, line = run(repo, cache, args)
            print(
                f"cache {cache}: s/step {[round(s, 1) for s in steps]}, "
                f"median {statistics.median(steps):.1f}; {line}"
            )
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
