# SPDX-License-Identifier: Apache-2.0
"""Recall of areal-lint's ARL1xx rules on flake8-async's blocking-call eval files (ASYNC210-251).

Run: ``python benchmarks/bench_lint_recall.py PATH_TO_FLAKE8_ASYNC_CHECKOUT [--show-missed]``.
The files are read from the checkout (``tests/eval_files/async2*.py``), never copied into this
repository. Each file's expected lines are those carrying an ``# ASYNCnnn:`` comment; a line
counts as found when areal-lint reports any ARL1xx code on it. The eval files leave some imports
implicit (``httpx`` and ``Optional`` in async212.py, ``subprocess`` in async22x.py...), so a
fixed header of imports is put before each file and the line numbers are shifted back.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import table

EVAL_FILES = [
    "async210.py", "async211.py", "async212.py", "async22x.py", "async22x_asyncio.py",
    "async232.py", "async232_asyncio.py", "async23x.py", "async23x_asyncio.py", "async240.py",
    "async250.py", "async250_multi_library.py", "async251.py", "async251_multi_library.py",
]  # fmt: skip
# The names the eval files use without importing them.
HEADER = (
    "import os\n"
    "import subprocess\n"
    "import httpx\n"
    "import httpx2\n"
    "import urllib3\n"
    "import requests\n"
    "from typing import Optional\n"
    "from urllib import request\n"
    "from urllib.request import urlopen\n"
)
EXPECTED = re.compile(r"#\s*(ASYNC2\d\d)(?:_asyncio)?:")


def expected_lines(text: str) -> dict[int, str]:
    """Line number (1-based, in the original file) -> the ASYNC code expected there."""
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECTED.search(line)
        if match:
            found[number] = match.group(1)
    return found


def lint_lines(path: Path, shift: int) -> set[int]:
    """Original line numbers where areal-lint reports an ARL1xx code."""
    lint = Path(sys.executable).parent / "areal-lint"
    run = subprocess.run(
        [str(lint), "--config", "none", "--format", "json", str(path)],
        capture_output=True,
        text=True,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"areal-lint failed on {path}: {run.stderr.strip()}")
    findings = json.loads(run.stdout or "[]")
    return {f["line"] - shift for f in findings if f["code"].startswith("ARL1")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="a clone of github.com/python-trio/flake8-async")
    parser.add_argument("--show-missed", action="store_true", help="print every missed line")
    args = parser.parse_args()
    eval_dir = Path(args.checkout) / "tests" / "eval_files"
    if not eval_dir.is_dir():
        raise SystemExit(f"{eval_dir} not found: pass the root of a flake8-async checkout")
    shift = HEADER.count("\n")
    rows: list[list[object]] = []
    total_expected = total_found = total_extra = 0
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in EVAL_FILES:
            source = eval_dir / name
            if not source.exists():
                raise SystemExit(f"{source} not found: is this checkout older than ASYNC251?")
            text = source.read_text(encoding="utf-8")
            expected = expected_lines(text)
            copy = Path(scratch) / name
            copy.write_text(HEADER + text, encoding="utf-8")
            reported = lint_lines(copy, shift)
            found = expected.keys() & reported
            extra = reported - expected.keys()
            lines = text.splitlines()
            missed += [
                f"{name}:{n}: {lines[n - 1].strip()}" for n in sorted(expected.keys() - found)
            ]
            rows.append([name, len(expected), len(found), len(extra)])
            total_expected += len(expected)
            total_found += len(found)
            total_extra += len(extra)
    recall = total_found / max(total_expected, 1)
    rows.append(["**all**", total_expected, total_found, total_extra])
    print(table(["file", "expected lines", "found", "ARL1xx on other lines"], rows))
    print(f"\nrecall: {total_found}/{total_expected} = {recall:.3f}")
    if args.show_missed:
        print("\nmissed:\n" + "\n".join(missed))


if __name__ == "__main__":
    main()
