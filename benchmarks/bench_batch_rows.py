# SPDX-License-Identifier: Apache-2.0
"""Rows joining and leaving the local engine's batch: in place against copying the cache.

Two measures, each run with the in-place path on and off (off = ``growing_layers`` answering
None, so rows change as before: transformers' ``batch_select_indices``, ``torch.cat`` merges,
and the copy into a fresh buffer on the next step), alternating, medians:

- **engine**: the embedded default model serving 256 requests of an agent's shape (a shared
  system prompt with a tool schema, a varied question; 8-48 new tokens each, EOS ignored, so
  rows finish at different steps and others join), all submitted at once to a 32-row batch:
  wall time and the process's CPU time;
- **train**: ``areal-devkit train`` of a freshly scaffolded ``agent_anthropic`` tool agent
  (``--steps 6``, seed 1) in child processes: the six steps' wall time (``elapsed_s`` of the
  last step; a single step's time swings 1-6 s with the rollouts in flight) and the child's
  CPU time, start-up included, and its engine thread's CPU time.

Run: ``PYTHONPATH=. python benchmarks/bench_batch_rows.py [--rounds 5] [--train-rounds 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import REPO, table
from bench_tool_agents import scaffold

SYSTEM = (
    "You are a careful calculator. Tools: add(a: int, b: int) -> int, the sum of a and b; "
    "call it with JSON arguments when a sum is asked, then answer with the number alone."
)


def engine_round(engine, tok, in_place: bool, seed: int) -> tuple[float, float]:
    """Wall and CPU seconds for serving the workload once."""
    from areal_runtime.api import GenerationHyperparameters, ModelRequest
    from areal_runtime.engine.local import batching

    rng = random.Random(seed)
    batching.growing_layers = ON if in_place else (lambda cache: None)
    requests = []
    for i in range(256):
        prompt = tok.apply_chat_template(
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"What is {rng.randint(0, 999)}+{i}?"},
            ],
            add_generation_prompt=True, tokenize=True, return_dict=False,
        )  # fmt: skip
        new = rng.randint(8, 48)
        g = GenerationHyperparameters(max_new_tokens=new, ignore_eos=True, temperature=1.0)
        requests.append(ModelRequest(input_ids=prompt, gconfig=g))

    async def serve() -> None:
        await asyncio.gather(*(engine.agenerate(r) for r in requests))

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(serve())
    return time.perf_counter() - wall, time.process_time() - cpu


def train_round(repo: Path, in_place: bool) -> tuple[float, float]:
    """The six steps' seconds, the child's CPU seconds and its engine thread's, of one
    ``train --steps 6``."""
    metrics = repo / f"metrics-{in_place}.jsonl"
    metrics.unlink(missing_ok=True)
    code = (
        "import sys, time; from areal_runtime.engine.local import batching, engine\n"
        f"if not {in_place}: batching.growing_layers = lambda cache: None\n"
        "work = engine.LocalEngine._worker\n"
        "def timed(self):\n"
        "    start = time.thread_time()\n"
        "    try: work(self)\n"
        "    finally: print('engine-cpu', time.thread_time() - start, file=sys.stderr)\n"
        "engine.LocalEngine._worker = timed\n"
        "from areal_devkit.cli import main; sys.exit(main(sys.argv[1:]))\n"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-c", code, "train", "myproj.workflow.calc:CalcAgent", "--steps", "6",
         "--seed", "1", "--quiet", "--metrics-out", str(metrics)],
        cwd=repo, check=True, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": f"{repo}{os.pathsep}{REPO}"},
    )  # fmt: skip
    engine_cpu = float(proc.stderr.split("engine-cpu ")[-1].split()[0])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = json.loads(metrics.read_text().splitlines()[-1])["elapsed_s"]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu, engine_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="engine rounds per mode")
    parser.add_argument("--train-rounds", type=int, default=3, help="train runs per mode")
    args = parser.parse_args()

    import torch

    from areal_runtime.engine.local import LocalEngine
    from areal_runtime.models.tokenizers import tiny_tokenizer

    torch.set_num_threads(1)
    engine, tok = LocalEngine.default(seed=0), tiny_tokenizer()
    engine_round(engine, tok, True, seed=99)  # warm up
    measured: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for r in range(args.rounds):
        for in_place in (False, True) if r % 2 else (True, False):
            measured[in_place].append(engine_round(engine, tok, in_place, seed=r))
    engine.close()
    rows = []
    for in_place in (False, True):
        wall = statistics.median(w for w, _ in measured[in_place])
        cpu = statistics.median(c for _, c in measured[in_place])
        rows.append(["engine, 256 requests", _mode(in_place), f"{wall:.2f} s", f"{cpu:.2f} s", "-"])
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder) / "repo"
        scaffold(repo, "agent_anthropic")
        runs: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
        for r in range(args.train_rounds):
            for in_place in (False, True) if r % 2 else (True, False):
                runs[in_place].append(train_round(repo, in_place))
        for in_place in (False, True):
            wall, cpu, engine_cpu = (
                statistics.median(r[i] for r in runs[in_place]) for i in range(3)
            )
            rows.append(
                [
                    "train, agent_anthropic, 6 steps",
                    _mode(in_place),
                    f"{wall:.1f} s",
                    f"{cpu:.1f} s",
                    f"{engine_cpu:.1f} s",
                ]
            )
    print(table(["workload", "rows change", "wall", "CPU", "engine thread CPU"], rows))


def _mode(in_place: bool) -> str:
    return "in place" if in_place else "by copies (before)"


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    from areal_runtime.engine.local.batching import growing_layers as ON

    main()
