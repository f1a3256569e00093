# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit train`` against TRL's GRPOTrainer, side by side in one run.

Same model (the under-confident embedded model), same task (the default arithmetic task), 32
completions per step (4 prompts x 8), at most 8 new tokens, one torch thread per process.
Each trainer runs in its own subprocess, which reports the median seconds per step (the first
``--warmup`` steps dropped) and its peak RSS (``resource.getrusage`` maxrss).

Setup (TRL is a benchmark-only extra; never installed by ``make``):

    pip install -c scripts/constraints.txt -e '.[bench]'
    PYTHONPATH=. python benchmarks/bench_train.py [--steps 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPTS, GROUP, NEW_TOKENS = 4, 8, 8


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024  # KiB on Linux


def worker_areal(steps: int, warmup: int) -> dict:
    from areal_devkit.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "m.jsonl"
        argv = [
            "train", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", "--quiet",
            "--steps", str(steps), "--batch-size", str(PROMPTS), "--group-size", str(GROUP),
            "--max-new-tokens", str(NEW_TOKENS), "--metrics-out", str(metrics),
        ]  # fmt: skip
        start = time.perf_counter()
        assert main(argv) == 0
        wall = time.perf_counter() - start
        rows = [json.loads(x) for x in metrics.read_text().splitlines()]
    seconds = [r["step_seconds"] for r in rows[warmup:]]
    return {
        "step_s": statistics.median(seconds),
        "wall_s": wall,
        "rss_mb": peak_rss_mb(),
        "reward_first": rows[0]["reward_mean"],
        "reward_last": rows[-1]["reward_mean"],
    }


def worker_trl(steps: int, warmup: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from areal_devkit.commands.train import default_task_rows
    from areal_runtime.models.default_model import arithmetic_reward, load_underconfident_model

    model, tok = load_underconfident_model()
    rows = default_task_rows()
    data = Dataset.from_list([{"prompt": r["messages"], "answer": r["answer"]} for r in rows])

    def reward(completions, answer, **_):
        return [
            arithmetic_reward(completions=c[0]["content"] if isinstance(c, list) else c, answer=a)
            for c, a in zip(completions, answer, strict=True)
        ]

    stamps: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            stamps.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        config = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=PROMPTS * GROUP,
            num_generations=GROUP,
            max_completion_length=NEW_TOKENS,
            max_steps=steps,
            learning_rate=3e-4,
            temperature=1.0,
            use_cpu=True,
            bf16=False,
            report_to=[],
            logging_steps=10_000,
            save_strategy="no",
            seed=1,
            dataloader_num_workers=0,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=config,
            train_dataset=data,
            processing_class=tok,
            callbacks=[Clock()],
        )
        start = time.perf_counter()
        trainer.train()
        wall = time.perf_counter() - start
    deltas = [b - a for a, b in itertools.pairwise(stamps)][max(0, warmup - 1) :]
    return {"step_s": statistics.median(deltas), "wall_s": wall, "rss_mb": peak_rss_mb()}


def run_worker(kind: str, steps: int, warmup: int) -> dict | str:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        kind,
        "--steps",
        str(steps),
        "--warmup",
        str(warmup),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--worker", choices=["areal", "trl"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    if args.worker:
        fn = worker_areal if args.worker == "areal" else worker_trl
        print(json.dumps(fn(args.steps, args.warmup)))
        return
    results: dict[str, list[dict]] = {"areal": [], "trl": []}
    errors: dict[str, str] = {}
    for _ in range(args.repeats):  # interleaved, so load changes hit both alike
        for kind in ("areal", "trl"):
            out = run_worker(kind, args.steps, args.warmup)
            if isinstance(out, str):
                errors[kind] = out
            else:
                results[kind].append(out)
    samples = PROMPTS * GROUP
    print(f"{samples} completions/step (4 prompts x 8), <= {NEW_TOKENS} new tokens, "
          f"{args.steps} steps, median of {args.repeats} runs\n")  # fmt: skip
    print("| trainer | s/step | samples/s | peak RSS MiB | ratio to TRL |")
    print("|---|---|---|---|---|")
    trl_rate = None
    if results["trl"]:
        trl_rate = samples / statistics.median(r["step_s"] for r in results["trl"])
    for kind, label in (("trl", "TRL GRPOTrainer"), ("areal", "areal-devkit train")):
        if not results[kind]:
            print(f"| {label} | failed: {errors.get(kind)} | | | |")
            continue
        step = statistics.median(r["step_s"] for r in results[kind])
        rss = statistics.median(r["rss_mb"] for r in results[kind])
        ratio = f"{samples / step / trl_rate:.2f}x" if trl_rate else "-"
        print(f"| {label} | {step:.3f} | {samples / step:.1f} | {rss:.0f} | {ratio} |")


if __name__ == "__main__":
    main()
