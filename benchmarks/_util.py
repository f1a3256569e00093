# SPDX-License-Identifier: Apache-2.0
"""Timing helpers and captured client requests shared by the benchmark scripts."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLIENT_REQUESTS = REPO / "tests/areal_runtime/experimental/openai/client_requests"
FIXTURE_QUESTION = "What is 2+3?"  # the question every captured request asks


def asking(body: dict, question: str) -> dict:
    """A captured request body with its question replaced (it must be there exactly once)."""
    text = json.dumps(body)
    if text.count(json.dumps(FIXTURE_QUESTION)) != 1:
        raise SystemExit(f"the captured request does not ask {FIXTURE_QUESTION!r} exactly once")
    return json.loads(text.replace(json.dumps(FIXTURE_QUESTION), json.dumps(question)))


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs, after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table(headers: list[str], rows: list[list[object]]) -> str:
    """A Markdown table, so the output pastes straight into BENCHMARKS.md."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def module_at(ref: str, path: str) -> types.ModuleType:
    """The module at ``path`` (from the repository root) as it was at git ``ref``, imported
    under another name, so that an old version can run beside this tree's in one process."""
    source = subprocess.run(
        ["git", "show", f"{ref}:{path}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"{Path(path).stem}_{ref}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{ref}:{path}", "exec"), module.__dict__)
    return module
