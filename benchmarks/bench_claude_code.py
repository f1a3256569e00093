# SPDX-License-Identifier: Apache-2.0
"""Claude Code through ``areal-devkit serve``, as a user runs it (issue 39, item 2).

Starts ``areal-devkit serve --port 0`` (the embedded model, or ``--engine``), then runs the
Claude Code CLI bundled in ``claude-agent-sdk`` twice with the same question, pointed at the
proxy by ``ANTHROPIC_BASE_URL`` and the printed key only (its own defaults otherwise): ``claude
-p "What is 17+25?"``. Per call: wall seconds, the model requests it made (serve's request log),
whether the answer was cut at the output token limit (the CLI says "Output token limit hit" or
"API Error: Claude's response exceeded the N output token maximum"), and its first line.

    PYTHONPATH=. python benchmarks/bench_claude_code.py [--engine hf:DIR] [--question TEXT] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BANNER_END = "one line per request follows"
CUT = re.compile(r"Output token limit hit|exceeded the \d+ output token")


def claude_cli() -> Path:
    import claude_agent_sdk

    return Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def start_serve(tmp: Path, options: list[str]) -> tuple[subprocess.Popen, dict[str, str]]:
    cmd = [sys.executable, "-m", "areal_devkit", "serve", "--port", "0", "--save-every", "0",
           "--output", str(tmp / "sessions.jsonl"), "--log-requests", str(tmp / "req.jsonl"),
           *options]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    banner = ""
    while BANNER_END not in banner:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit("serve exited early:\n" + banner)
        banner += line

    def value(label: str) -> str:
        return banner.split(label, 1)[1].split()[0]

    return proc, {"url": value("Anthropic base URL"), "key": value("API key")}


def ask(served: dict[str, str], question: str, home: Path) -> tuple[float, str]:
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": served["url"],
        "ANTHROPIC_API_KEY": served["key"],
        "HOME": str(home),  # a fresh user: no settings, no login
    }
    start = time.perf_counter()
    done = subprocess.run(
        [str(claude_cli()), "-p", question], env=env, capture_output=True, text=True, timeout=900
    )
    return time.perf_counter() - start, done.stdout + done.stderr


def requests_logged(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", help="serve's --engine (default: the embedded model)")
    parser.add_argument("--question", default="What is 17+25?")
    parser.add_argument("--calls", type=int, default=2)
    parser.add_argument(
        "--seed", type=int, help="serve's --seed: without it every run is one sample path"
    )
    args = parser.parse_args()
    options = ["--engine", args.engine] if args.engine else []
    options += ["--seed", str(args.seed)] if args.seed is not None else []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        proc, served = start_serve(tmp, options)
        try:
            print("| call | wall s | model requests | cut at the token limit | load | answer |")
            print("|---|---|---|---|---|---|")
            for call in range(1, args.calls + 1):
                before = requests_logged(tmp / "req.jsonl")
                load = os.getloadavg()[0]
                seconds, text = ask(served, args.question, tmp / "home")
                made = requests_logged(tmp / "req.jsonl") - before
                first = (text.strip().splitlines() or [""])[0][:60]
                print(
                    f"| {call} | {seconds:.1f} | {made} | {bool(CUT.search(text))} | "
                    f"{load:.1f} | {json.dumps(first)} |",
                    flush=True,
                )
        finally:
            proc.terminate()
            proc.communicate(timeout=60)


if __name__ == "__main__":
    main()
