# SPDX-License-Identifier: Apache-2.0
"""Recall and precision of areal-lint on hand-written raw-HTTP agents (httpx, aiohttp).

Run: ``PYTHONPATH=benchmarks python benchmarks/bench_lint_raw_http.py [--show]``. The agents
are ``tests/areal_lint/eval_files/raw_http/*.py``; each one's ``# ARLnnn`` comments are the
findings it should produce (every code is checked; the ``*_clean.py`` files expect none). A
finding counts as found when areal-lint reports that code on that line (the exact message is
checked by ``tests/areal_lint/test_eval_files.py``); any other finding is a false one.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from _util import table

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ROOT / "tests" / "areal_lint" / "eval_files" / "raw_http"
EXPECTATION = re.compile(r"#\s*(ARL\d{3})\b")


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if "noqa" not in line:
            out |= {(number, code) for code in EXPECTATION.findall(line)}
    return out


def reported(paths: list[Path]) -> dict[str, set[tuple[int, str]]]:
    run = subprocess.run(
        [sys.executable, "-m", "areal_lint.cli", "--config", "none", "--no-cache",
         "--format", "json", *map(str, paths)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    if run.returncode not in (0, 1):
        raise SystemExit(f"areal-lint failed: {run.stderr.strip()}")
    out: dict[str, set[tuple[int, str]]] = {}
    for f in json.loads(run.stdout or "[]"):
        out.setdefault(Path(f["path"]).name, set()).add((f["line"], f["code"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each missed or false finding")
    args = parser.parse_args()
    paths = sorted(AGENTS.glob("*.py"))
    found_by_file = reported(paths)
    rows: list[list[object]] = []
    total_want = total_hit = total_got = 0
    notes = []
    for path in paths:
        want = expected(path)
        got = found_by_file.get(path.name, set())
        hit = want & got
        rows.append([path.name, len(want), len(hit), len(got - want)])
        total_want, total_hit, total_got = (
            total_want + len(want), total_hit + len(hit), total_got + len(got),
        )  # fmt: skip
        notes += [f"missed {path.name}:{line} {code}" for line, code in sorted(want - got)]
        notes += [f"false  {path.name}:{line} {code}" for line, code in sorted(got - want)]
    rows.append(["**all**", total_want, total_hit, total_got - total_hit])
    print(table(["agent", "expected findings", "found", "false findings"], rows))
    recall = total_hit / max(total_want, 1)
    precision = total_hit / max(total_got, 1)
    print(f"\n{len(paths)} agents; recall {total_hit}/{total_want} = {recall:.3f}; "
          f"precision {total_hit}/{total_got} = {precision:.3f}")  # fmt: skip
    if args.show and notes:
        print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
