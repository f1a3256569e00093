# SPDX-License-Identifier: Apache-2.0
"""Wall time of areal-lint, flake8 --select=ARL and flake8-async on a source tree.

Run: ``python benchmarks/bench_lint.py TREE [--flake8-async-venv DIR]``; each command runs 3
times and the median is shown. ``flake8 --select=E999`` is flake8's own baseline, so the
plugin's added time is ``flake8 --select=ARL`` minus it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _util import table


def timed(cmd: list[str], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--flake8-async-venv")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    n_files = sum(1 for _ in Path(args.tree).rglob("*.py"))
    rows = []
    lint = timed([str(bindir / "areal-lint"), args.tree])
    rows.append(["areal-lint (2 processes)", f"{lint:.2f}"])
    serial = timed([str(bindir / "areal-lint"), "--jobs", "1", args.tree])
    rows.append(["areal-lint --jobs 1", f"{serial:.2f}"])
    base = timed([str(bindir / "flake8"), "--select=E999", args.tree])
    arl = timed([str(bindir / "flake8"), "--select=ARL", args.tree])
    rows.append(["flake8 --select=E999 (baseline)", f"{base:.2f}"])
    rows.append(["flake8 --select=ARL", f"{arl:.2f}"])
    if args.flake8_async_venv:
        f8 = Path(args.flake8_async_venv) / "bin" / "flake8"
        base_a = timed([str(f8), "--select=E999", args.tree], repeats=1)
        f8a = timed([str(f8), "--select=ASYNC", args.tree], repeats=1)
        rows.append(["flake8-async: flake8 --select=ASYNC", f"{f8a:.2f}"])
        rows.append(
            [
                "ARL plugin's added time / flake8-async's added time",
                f"{(arl - base) / max(f8a - base_a, 1e-9) * 100:.1f} %",
            ]
        )
    print(f"{args.tree}: {n_files} Python files\n")
    print(table(["command", "median wall s"], rows))


if __name__ == "__main__":
    main()
