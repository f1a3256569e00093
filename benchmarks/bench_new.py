# SPDX-License-Identifier: Apache-2.0
"""Wall and CPU time of ``areal-devkit new`` per variant, for one or more code checkouts.

Each run scaffolds into a fresh copy of the bundled lazy seed project, as ``python -m
areal_devkit new`` with ``PYTHONPATH`` set to the checkout (its hooks and ruff inherit it); CPU
is user + system time of the command and every process it waited for. The checkouts take
turns run by run, so a change in machine load falls on all of them alike.

Run: ``python benchmarks/bench_new.py [--code OLD_CHECKOUT] [--code .] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import table

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples/seed_projects/lazy_project"
sys.path.insert(0, str(ROOT))
from areal_devkit.scaffold.variants import VARIANTS  # noqa: E402


def once(code: Path, variant: str, scratch: Path) -> tuple[float, float]:
    """``(wall s, cpu s)`` of one ``areal-devkit new`` into a fresh seed copy."""
    repo = Path(tempfile.mkdtemp(dir=scratch)) / "repo"
    shutil.copytree(SEED, repo)
    env = {**os.environ, "PYTHONPATH": str(code), "COOKIECUTTER_CONFIG": str(scratch / "cc.yaml")}
    cmd = [sys.executable, "-m", "areal_devkit", "new", "bench", "--variant", variant]
    cmd += ["--package", "myproj.workflow", "--repo", str(repo)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=scratch, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", action="append", type=Path, help="checkout(s); default: this")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    codes = [c.resolve() for c in (args.code or [ROOT])]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        (scratch / "cc.yaml").write_text(f"replay_dir: {scratch / 'replay'}\n")
        for variant in VARIANTS:
            times: dict[Path, list[tuple[float, float]]] = {c: [] for c in codes}
            for _ in range(args.runs):
                for code in codes:
                    times[code].append(once(code, variant, scratch))
            row: list[object] = [variant]
            for code in codes:
                row.append(f"{statistics.median(w for w, _ in times[code]):.2f}")
                row.append(f"{statistics.median(c for _, c in times[code]):.2f}")
            rows.append(row)
    headers = ["variant"]
    for code in codes:
        headers += [f"wall s ({code.name})", f"cpu s ({code.name})"]
    print(table(headers, rows))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; medians of {args.runs}")


if __name__ == "__main__":
    main()
