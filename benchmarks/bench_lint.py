# SPDX-License-Identifier: Apache-2.0
"""Wall time of areal-lint, flake8 --select=ARL and flake8-async on source trees.

Run: ``python benchmarks/bench_lint.py TREE [TREE ...] [--pure-flake8-venv DIR]
[--flake8-async-venv DIR]``. Each command runs ``--repeats`` times (flake8-async once: it takes
minutes) and the median is shown. flake8 loads every installed plugin whatever ``--select``
says, so a plugin's added time is its flake8 run minus flake8 alone, from a venv with no
plugins (``--pure-flake8-venv``; without it, this venv's ``--select=E999`` run is the baseline).

Each tree also gets the pre-commit case, ``areal-lint`` on one changed file: the tree's largest
file with ``async def`` (it is parsed, so libcst is imported) and its largest file without (it is
not), 10 runs each. Without AReaL's tree, pass this repository's (``areal_runtime tests``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _util import table


def timed(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_changed_file(tree: str) -> tuple[Path | None, Path | None]:
    """The largest file with ``async def`` and the largest without: a pre-commit hook's input."""
    with_async: list[tuple[int, Path]] = []
    without: list[tuple[int, Path]] = []
    for path in Path(tree).rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        (with_async if "async def" in text else without).append((len(text), path))
    return (
        max(with_async)[1] if with_async else None,
        max(without)[1] if without else None,
    )


def bench_tree(tree: str, args: argparse.Namespace) -> list[list[str]]:
    here = Path(sys.executable).parent
    pure = Path(args.pure_flake8_venv) / "bin" if args.pure_flake8_venv else here
    rows: list[list[str]] = []

    def add(label: str, seconds: float) -> float:
        rows.append([tree, label, f"{seconds:.2f}"])
        return seconds

    with_async, without = one_changed_file(tree)
    for label, path in (("async def", with_async), ("no async def", without)):
        if path is not None:
            seconds = timed([str(here / "areal-lint"), str(path)], max(args.repeats, 10))
            add(f"one changed file, {label} ({path.name})", seconds)
    add("areal-lint (2 processes)", timed([str(here / "areal-lint"), tree], args.repeats))
    add("areal-lint --jobs 1", timed([str(here / "areal-lint"), "--jobs", "1", tree], args.repeats))
    base = add(
        "flake8 alone, --select=E999",
        timed([str(pure / "flake8"), "--select=E999", tree], args.repeats),
    )
    arl = add(
        "flake8 + ARL plugin, --select=ARL",
        timed([str(here / "flake8"), "--select=ARL", tree], args.repeats),
    )
    rows.append([tree, "ARL plugin's added time", f"{arl - base:.2f}"])
    if args.flake8_async_venv:
        f8a_bin = Path(args.flake8_async_venv) / "bin" / "flake8"
        f8a = add(
            "flake8 + flake8-async, --select=ASYNC (1 run)",
            timed([str(f8a_bin), "--select=ASYNC", tree], 1),
        )
        rows.append([tree, "flake8-async's added time", f"{f8a - base:.2f}"])
        rows.append(
            [tree, "ARL added / flake8-async added", f"{(arl - base) / max(f8a - base, 1e-9):.1%}"]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--pure-flake8-venv")
    parser.add_argument("--flake8-async-venv")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for tree in args.trees:
        n_files = sum(1 for _ in Path(tree).rglob("*.py"))
        print(f"{tree}: {n_files} Python files", flush=True)
        rows.extend(bench_tree(tree, args))
    print()
    print(table(["tree", "command", "median wall s"], rows))


if __name__ == "__main__":
    main()
