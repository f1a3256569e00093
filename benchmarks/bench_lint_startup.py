# SPDX-License-Identifier: Apache-2.0
"""The pre-commit case: ``areal-lint`` on one changed file with ``async def``, and where its
start-up time goes.

Run: ``python benchmarks/bench_lint_startup.py FILE [--repeats 9]``. Prints the median wall
time and the median CPU time (user + sys of the child: on a loaded shared machine the wall time
is mostly waiting for a core, the CPU time is what the run costs), then ``python -X importtime``
of one run summed per top-level package (the smallest of ``--repeats`` runs per module, so
noise from other processes is left out).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from _util import table

IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def timed_run(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def import_profile(cmd: list[str], repeats: int) -> dict[str, float]:
    """Seconds of import time per top-level package (min over runs per module)."""
    best: dict[str, int] = {}
    for _ in range(repeats):
        run = subprocess.run(
            [sys.executable, "-X", "importtime", *cmd], capture_output=True, text=True
        )
        for line in run.stderr.splitlines():
            match = IMPORT_LINE.match(line)
            if match:
                module = match.group(4)
                best[module] = min(best.get(module, 1 << 60), int(match.group(1)))
    per_package: dict[str, float] = defaultdict(float)
    for module, micros in best.items():
        per_package[module.split(".")[0]] += micros / 1e6
    return per_package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="one Python file with async def (e.g. AReaL's rlvr.py)")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    path = Path(args.file)
    if not path.is_file() or "async def" not in path.read_text(encoding="utf-8"):
        raise SystemExit(f"{path}: give one existing file that contains async def")
    lint = [sys.executable, "-m", "areal_lint.cli", "--config", "none", str(path)]
    runs = [timed_run(lint) for _ in range(args.repeats)]
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    print(
        table(
            ["measure", "median s", "min s"],
            [
                ["wall", f"{statistics.median(walls):.3f}", f"{min(walls):.3f}"],
                ["CPU (user + sys)", f"{statistics.median(cpus):.3f}", f"{min(cpus):.3f}"],
            ],
        )
    )
    profile = import_profile(lint[1:], args.repeats)
    rows = sorted(profile.items(), key=lambda item: -item[1])
    top = [[name, f"{seconds * 1000:.1f}"] for name, seconds in rows[:8]]
    top.append(["all imports", f"{sum(profile.values()) * 1000:.1f}"])
    print()
    print(table(["package", "import ms (python -X importtime, self, min per module)"], top))


if __name__ == "__main__":
    main()
