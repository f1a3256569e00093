# SPDX-License-Identifier: Apache-2.0
"""areal-lint cold and warm (content cache) against ruff, paired in one run.

Run: ``PYTHONPATH=benchmarks python benchmarks/bench_lint_cache.py TREE [--repeats 5]
[--jobs 2]``. TREE is AReaL's ``areal/`` package of the pinned release (``pip download
areal==1.0.4 --no-deps`` and unzip, or the installed package in ``.venv-areal``). Each round
runs, one after the other: ``areal-lint --no-cache`` (cold, the run before this issue had no
cache), ``areal-lint`` into an emptied cache folder (cold, storing), ``areal-lint`` again (warm:
every file a cache hit) and ``ruff check --select ASYNC --no-cache`` (ruff's flake8-async
port, the speed users compare with). Medians over the rounds, wall and CPU (user + system of
the process and its workers): on a shared machine the CPU seconds are the steadier figure. The
findings of the cold and warm runs are checked equal. Byte-code is cached (in a temporary
``PYTHONPYCACHEPREFIX``) and one untimed round goes first, as for an installed package.
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


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the children it started, and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # from a neutral folder: ``python -m`` puts the current folder first on sys.path
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return wall, cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--baseline",
        help="another checkout of this repository (e.g. main before the cache): its areal-lint "
        "runs cold in the same rounds, for a side-by-side ratio",
    )
    args = parser.parse_args()
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    cache = Path(tempfile.mkdtemp(prefix="areal-lint-cache-"))
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "AREAL_LINT_CACHE_DIR": str(cache), "PYTHONPATH": str(repo)}
    # byte-code caches as an installed package has them (this sandbox turns them off)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="areal-lint-pyc-")
    args.tree = str(Path(args.tree).resolve())
    lint = [sys.executable, "-m", "areal_lint.cli", "--config", "none", "--jobs", str(args.jobs)]
    commands = {
        "areal-lint --no-cache (cold)": [*lint, "--no-cache", args.tree],
        "areal-lint, empty cache (cold, stores)": [*lint, args.tree],
        "areal-lint, cache filled (warm)": [*lint, args.tree],
        "ruff check --select ASYNC --no-cache": [
            ruff, "check", "--isolated", "--no-cache", "--select", "ASYNC", args.tree,
        ],
    }  # fmt: skip
    envs = {name: env for name in commands}
    if args.baseline:
        name = f"areal-lint at {args.baseline} (cold)"
        commands = {name: [*lint, args.tree], **commands}
        envs[name] = {**env, "PYTHONPATH": str(Path(args.baseline).resolve())}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for name, cmd in commands.items():  # warm-up: byte-code written, files in the page cache
        run(cmd, envs[name])
    for _ in range(args.repeats):
        shutil.rmtree(cache, ignore_errors=True)
        outputs = {}
        for name, cmd in commands.items():
            wall, cpu, outputs[name] = run(cmd, envs[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
        cold, warm = (
            outputs["areal-lint --no-cache (cold)"],
            outputs["areal-lint, cache filled (warm)"],
        )
        if cold != warm:
            raise SystemExit("the warm run's findings differ from the cold run's")
    shutil.rmtree(cache, ignore_errors=True)
    ruff_cpu = statistics.median(cpus["ruff check --select ASYNC --no-cache"])
    rows = []
    for name in commands:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        rows.append([name, f"{wall:.2f}", f"{cpu:.2f}", f"{cpu / ruff_cpu:.1f}x"])
    files = sum(1 for _ in Path(args.tree).rglob("*.py"))
    print(f"{args.tree}: {files} files, --jobs {args.jobs}, {args.repeats} rounds, "
          f"load average {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs")  # fmt: skip
    print(table(["command", "median wall s", "median CPU s", "CPU vs ruff"], rows))


if __name__ == "__main__":
    main()
