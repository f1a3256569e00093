# SPDX-License-Identifier: Apache-2.0
"""Precision and recall of the stall detector's "the workflow stalled the loop" verdict.

Each case of ``benchmarks/stall_corpus/`` is an agent with its expected verdict (``EXPECTED``)
and, for a stall, the line that blocks (marked ``# blocks``). Each runs in a fresh process (so
first imports and first TLS set-ups are really first) through ``areal-devkit run``'s own path,
with the scripted engine, at concurrency 1, 8 and 32, on an idle machine and beside two CPU
burners. A run says "stall" when ``run --fail-on-stall`` would fail it; it is right when that
matches ``EXPECTED`` and every stall it charges to the workflow names the marked line.

    PYTHONPATH=. python benchmarks/bench_stall_detector.py               # the corpus, both ways
    PYTHONPATH=. python benchmarks/bench_stall_detector.py --cases sleep_in_run,async_sleep
    PYTHONPATH=. python benchmarks/bench_stall_detector.py --variants 10 # + the template's
        # unmodified variants under `run --fail-on-stall`, 10 runs each beside the burners
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "stall_corpus"
CONCURRENCIES = (1, 8, 32)
VARIANTS = (
    "rlvr",
    "multi_turn",
    "vision",
    "agent_openai",
    "agent_openai_agents",
    "agent_anthropic",
)


def cases() -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


def expected(case: str) -> tuple[str, int | None]:
    """(``"stall"`` or ``"clean"``, the line marked ``# blocks``)."""
    text = (CORPUS / f"{case}.py").read_text()
    verdict = "stall" if 'EXPECTED = "stall"' in text else "clean"
    marked = [
        n for n, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# blocks")
    ]
    return verdict, (marked[0] if marked else None)


@contextlib.contextmanager
def slow_server() -> Iterator[str]:
    """A local HTTP server that answers every GET after 150 ms (the cases' remote service)."""

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(0.15)
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@contextlib.contextmanager
def burners(count: int) -> Iterator[None]:
    """``count`` processes that spin on a CPU: a busy laptop."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def run_one(case: str) -> list[dict]:
    """In the child: the case at each concurrency through ``areal-devkit run`` itself (its
    command function, in this process), keeping the report it computed."""
    import contextlib
    import io

    from areal_devkit.cli import build_parser
    from areal_devkit.commands import run as run_command
    from areal_runtime.infra import workflow_executor

    sys.path.insert(0, str(CORPUS))
    reports = []
    real_run_rollout = workflow_executor.run_rollout

    async def keep_report(*args, **kwargs):
        result = await real_run_rollout(*args, **kwargs)
        reports.append(result.report)
        return result

    workflow_executor.run_rollout = keep_report
    results = []
    for concurrency in CONCURRENCIES:
        argv = ["run", f"{CORPUS / case}.py:Agent", "--engine", "scripted", "--allow-rejected"]
        argv += ["--limit", str(max(4, concurrency)), "--concurrency", str(concurrency)]
        with contextlib.redirect_stdout(io.StringIO()):
            run_command.run(build_parser().parse_args(argv))
        stalls = reports[-1].stalls
        mine = [s for s in stalls if s.is_workflows]
        results.append(
            {
                "case": case,
                "concurrency": concurrency,
                "workflow_stalls": len(mine),
                "lines": sorted({_site(s, case) for s in mine}, key=str),
                "machine_stalls": sum(s.verdict == "machine" for s in stalls),
                "other_stalls": sum(s.verdict in ("library", "runtime") for s in stalls),
            }
        )
    return results


def _site(stall: object, case: str) -> int | str:
    """The stall's line in the case file, or ``file:line`` when it named another file."""
    frame = stall.culprit  # type: ignore[attr-defined]
    if frame is None:
        return "<unknown>"
    if frame.filename.endswith(f"{case}.py"):
        return frame.lineno
    return f"{os.path.basename(frame.filename)}:{frame.lineno}"


def run_case(case: str, server: str) -> list[dict]:
    env = dict(os.environ, STALL_CORPUS_SERVER=server, PYTHONPATH=f"{ROOT}{os.pathsep}{CORPUS}")
    proc = subprocess.run(
        [sys.executable, __file__, "--one", case], capture_output=True, text=True, env=env,
        cwd=ROOT, timeout=600,
    )  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"case {case} failed to run:\n{proc.stderr[-3000:]}")
    return [json.loads(line) for line in lines]


def score(results: list[dict]) -> dict:
    tp = fp = fn = tn = 0
    wrong: list[str] = []
    for r in results:
        want, line = expected(r["case"])
        said = r["workflow_stalls"] > 0
        right_site = said and line is not None and r["lines"] == [line]
        if want == "stall" and right_site:
            tp += 1
        elif want == "stall":
            fn += 1
            fp += int(said)  # a stall charged to the wrong line is a false finding too
            wrong.append(
                f"{r['case']}@{r['concurrency']}: lines {r['lines'] or 'none'}, want {line}"
            )
        elif said:
            fp += 1
            wrong.append(
                f"{r['case']}@{r['concurrency']}: {r['workflow_stalls']} stall(s) at {r['lines']}"
            )
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": precision,
        "recall": recall,
        "wrong": wrong,
    }


def corpus(selected: list[str], conditions: list[str]) -> None:
    rows = []
    with slow_server() as server:
        for condition in conditions:
            with burners(2) if condition == "2 burners" else contextlib.nullcontext():
                start = time.perf_counter()
                results = [r for case in selected for r in run_case(case, server)]
                took = time.perf_counter() - start
            rows.append((condition, score(results), took, results))
    print(
        f"stall corpus: {len(selected)} cases x concurrency {CONCURRENCIES}, load before: {os.getloadavg()[0]:.1f}"
    )
    print(
        "| machine | runs | precision | recall | false findings | missed | machine's stalls | s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for condition, s, took, results in rows:
        machine = sum(r["machine_stalls"] for r in results)
        print(
            f"| {condition} | {len(results)} | {s['precision']:.2f} | {s['recall']:.2f} | "
            f"{s['fp']} | {s['fn']} | {machine} | {took:.0f} |"
        )
    for condition, s, _, _ in rows:
        for line in s["wrong"]:
            print(f"  wrong ({condition}): {line}")


def variants(runs: int) -> None:
    """Every unmodified template variant under ``run --fail-on-stall``, beside two burners."""
    devkit = [sys.executable, "-m", "areal_devkit"]
    print(f"| variant | passes --fail-on-stall beside 2 burners (of {runs}) |")
    print("|---|---|")
    with tempfile.TemporaryDirectory() as tmp, burners(2):
        package = Path(tmp, "proj", "workflow")
        package.mkdir(parents=True)
        for folder in (package.parent, package):
            (folder / "__init__.py").write_text("")
        for variant in VARIANTS:
            name = f"stall_{variant}"
            subprocess.run(
                [*devkit, "new", name, "--variant", variant, "--package", "proj.workflow"],
                cwd=tmp, check=True, capture_output=True,
            )  # fmt: skip
            module = Path(tmp, "proj", "workflow", f"{name}.py")
            cls = next(
                line.split()[1].split("(")[0].rstrip(":")
                for line in module.read_text().splitlines()
                if line.startswith("class ")
            )
            passed, failures = 0, []
            for _ in range(runs):
                proc = subprocess.run(
                    [*devkit, "run", f"proj.workflow.{name}:{cls}", "--fail-on-stall", "--limit", "8"],
                    cwd=tmp, capture_output=True, text=True, timeout=900,
                )  # fmt: skip
                if proc.returncode == 0:
                    passed += 1
                else:
                    failures.append(proc.stdout[-1500:] + proc.stderr[-1500:])
            print(f"| `{variant}` | {passed} |", flush=True)
            for failure in failures[:1]:
                print("    " + failure.replace("\n", "\n    "))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--idle-only", action="store_true", help="skip the run beside the burners")
    parser.add_argument(
        "--variants", type=int, default=0, help="runs per template variant (0: none)"
    )
    parser.add_argument("--variants-only", action="store_true", help="skip the corpus")
    args = parser.parse_args()
    if args.one:
        for result in run_one(args.one):
            print(json.dumps(result), flush=True)
        return
    selected = args.cases.split(",") if args.cases else cases()
    conditions = ["idle"] if args.idle_only else ["idle", "2 burners"]
    if not args.variants_only:
        corpus(selected, conditions)
    if args.variants:
        variants(args.variants)


if __name__ == "__main__":
    main()
