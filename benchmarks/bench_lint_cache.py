# SPDX-License-Identifier: Apache-2.0
"""areal-lint cold, warm (content cache) and on one changed file against ruff, paired in one run.

Run: ``PYTHONPATH=benchmarks python benchmarks/bench_lint_cache.py TREE [--repeats 5]
[--jobs 2] [--changed workflow/rlvr.py] [--baseline CHECKOUT]``. TREE is AReaL's ``areal/``
package of the pinned release (``git archive v1.0.4 areal`` of AReaL's repository, or the
installed package in ``.venv-areal``); it is copied to a temporary folder first. Each round
runs, one after the other: ``areal-lint --no-cache`` (cold), ``areal-lint`` into an emptied
cache folder (cold, storing), ``areal-lint`` again (warm: every file a cache hit); then one line
is appended to the ``--changed`` file and ``areal-lint`` runs on the tree (one cache miss) and on
that file alone with ``--no-cache`` (the pre-commit case: pre-commit passes the changed files,
which the cache cannot have); then the floor under a cold run (start-up, reading the tree,
importing libcst and parsing the files worth parsing in the same forked processes, nothing
else); last ``ruff check --select ASYNC --no-cache`` (ruff's flake8-async port, the speed users
compare with) on the tree and on the changed file. Medians over the rounds, wall and CPU (user
+ system of the process and its workers): on a shared machine the CPU seconds are the steadier
figure. The findings of the cold and warm runs are checked equal. Byte-code is cached (in a
temporary ``PYTHONPYCACHEPREFIX``) and one untimed round goes first, as for an installed
package.
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


def parse_only(tree: str, jobs: int) -> None:
    """The floor under a cold run: start-up, reading the tree, importing libcst and parsing the
    files worth parsing in ``jobs`` forked processes, largest first, as ``areal-lint`` does,
    with no index, walk or report."""
    from concurrent.futures import ProcessPoolExecutor

    from areal_lint.cli import iter_python_files
    from areal_lint.runner import might_have_findings

    texts = [p.read_text(encoding="utf-8") for p in iter_python_files([tree], set())]
    heavy = sorted((t for t in texts if might_have_findings(t)), key=len, reverse=True)
    import libcst  # noqa: F401  (inherited by the forked workers, as in areal-lint)

    with ProcessPoolExecutor(jobs) as pool:
        for _ in pool.map(_parse_count, heavy):
            pass


def _parse_count(text: str) -> int:
    """Parse as ``lint_source`` does: no node validation, the collector paused."""
    import gc

    from areal_lint.runner import parse_unvalidated

    gc.disable()
    try:
        return len(parse_unvalidated(text).body)
    finally:
        gc.enable()


def main() -> None:
    if sys.argv[1:2] == ["--parse-only"]:
        return parse_only(sys.argv[2], int(sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--changed",
        default="workflow/rlvr.py",
        help="the file (relative to TREE) edited before the one-changed-file runs",
    )
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
    source = Path(args.tree).resolve()
    copy = Path(tempfile.mkdtemp(prefix="areal-lint-tree-")) / source.name
    shutil.copytree(source, copy)
    args.tree = str(copy)
    changed = copy / args.changed
    if not changed.is_file():
        raise SystemExit(f"{changed}: --changed names no file of the tree")
    lint = [sys.executable, "-m", "areal_lint.cli", "--config", "none", "--jobs", str(args.jobs)]
    ruff_cmd = [ruff, "check", "--isolated", "--no-cache", "--select", "ASYNC"]
    one = f"{args.changed} alone"
    commands = {
        "areal-lint --no-cache (cold)": [*lint, "--no-cache", args.tree],
        "areal-lint, empty cache (cold, stores)": [*lint, args.tree],
        "areal-lint, cache filled (warm)": [*lint, args.tree],
        "areal-lint, one file changed (warm, 1 miss)": [*lint, args.tree],
        # --no-cache: the file just changed, so the cache has no entry for it (here it would,
        # from the row before)
        f"areal-lint {one} (pre-commit)": [*lint, "--no-cache", str(changed)],
        "libcst parse alone (the floor: import, read, parse)": [
            sys.executable,
            __file__,
            "--parse-only",
            args.tree,
            str(args.jobs),
        ],
        "ruff check --select ASYNC --no-cache": [*ruff_cmd, args.tree],
        f"ruff check --select ASYNC --no-cache, {one}": [*ruff_cmd, str(changed)],
    }
    edit_before = "areal-lint, one file changed (warm, 1 miss)"
    envs = {name: env for name in commands}
    if args.baseline:
        # its own cache folder, emptied with the other each round: a first run on each side
        base_cache = Path(tempfile.mkdtemp(prefix="areal-lint-base-cache-"))
        base_env = {
            **env,
            "PYTHONPATH": str(Path(args.baseline).resolve()),
            "AREAL_LINT_CACHE_DIR": str(base_cache),
        }
        base = {
            f"areal-lint at {args.baseline} --no-cache (cold)": [*lint, "--no-cache", args.tree],
            f"areal-lint at {args.baseline}, empty cache (cold, stores)": [*lint, args.tree],
            f"areal-lint at {args.baseline}, {one}": [*lint, "--no-cache", str(changed)],
        }
        commands = {**base, **commands}
        envs.update(dict.fromkeys(base, base_env))
    original = changed.read_text(encoding="utf-8")
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    load_before = os.getloadavg()[0]
    for name, cmd in commands.items():  # warm-up: byte-code written, files in the page cache
        run(cmd, envs[name])
    for round_ in range(args.repeats):
        shutil.rmtree(cache, ignore_errors=True)
        if args.baseline:
            shutil.rmtree(base_cache, ignore_errors=True)
        changed.write_text(original, encoding="utf-8")
        outputs = {}
        for name, cmd in commands.items():
            if name == edit_before:  # new content: a cache miss in this round
                changed.write_text(f"{original}# edited in round {round_}\n", encoding="utf-8")
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
    if args.baseline:
        shutil.rmtree(base_cache, ignore_errors=True)
    shutil.rmtree(copy.parent, ignore_errors=True)
    ruff_tree = "ruff check --select ASYNC --no-cache"
    ruff_one = f"{ruff_tree}, {one}"
    rows = []
    for name in commands:
        ruff_name = ruff_one if name.endswith((one, f"{one} (pre-commit)")) else ruff_tree
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        ruff_wall, ruff_cpu = (
            statistics.median(walls[ruff_name]),
            statistics.median(cpus[ruff_name]),
        )
        rows.append([
            name, f"{wall:.3f}", f"{cpu:.3f}",
            f"{wall / ruff_wall:.1f}x", f"{cpu / max(ruff_cpu, 0.001):.1f}x",
        ])  # fmt: skip
    files = sum(1 for _ in source.rglob("*.py"))
    print(f"{source}: {files} files, --jobs {args.jobs}, {args.repeats} rounds, load average "
          f"{load_before:.1f} before and {os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs")  # fmt: skip
    print(table(["command", "median wall s", "median CPU s", "wall vs ruff", "CPU vs ruff"], rows))


if __name__ == "__main__":
    main()
