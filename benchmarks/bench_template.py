# SPDX-License-Identifier: Apache-2.0
"""Time of bake + lint + generated tests for one variant, as a user runs them (3 runs, median).

Run: ``python benchmarks/bench_template.py [--variant rlvr]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import table

ROOT = Path(__file__).resolve().parents[1]


def once(variant: str) -> tuple[float, float, float]:
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(ROOT / "examples/seed_projects/lazy_project", repo)
        t0 = time.perf_counter()
        subprocess.run(
            [
                str(bindir / "areal-devkit"),
                "new",
                "bench",
                "--variant",
                variant,
                "--package",
                "myproj.workflow",
            ],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        t1 = time.perf_counter()
        subprocess.run(
            [str(bindir / "areal-lint"), "myproj", "tests"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        t2 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="rlvr")
    args = parser.parse_args()
    runs = [once(args.variant) for _ in range(3)]
    bake, lint, tests = (statistics.median(r[i] for r in runs) for i in range(3))
    print(
        table(
            ["step", "median s"],
            [
                ["bake (areal-devkit new)", f"{bake:.2f}"],
                ["areal-lint", f"{lint:.2f}"],
                ["generated tests (pytest)", f"{tests:.2f}"],
                ["total", f"{bake + lint + tests:.2f}"],
            ],
        )
    )


if __name__ == "__main__":
    main()
