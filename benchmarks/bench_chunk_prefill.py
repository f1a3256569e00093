# SPDX-License-Identifier: Apache-2.0
"""A long prompt prefilled in chunks, as the local engine does while other rows decode.

The prompt is Claude Code's captured request as the embedded tokenizer reads it, cut to
``--positions`` tokens (26,000 by default). Interleaved round by round, so load hits each alike:

* **masked**: chunks of ``--chunk`` tokens through transformers' SDPA with its ``[1, 1, q, T]``
  bool mask (how every chunk ran before ``chunk_sdpa``);
* **chunk_sdpa**: the same chunks through the engine's attention (the cached part unmasked,
  the chunk's own part causal, merged by log-sum-exp);
* **whole**: the prompt in one forward (transformers' causal kernel, no mask), what the engine
  does when no other row waits.

The first token and its logprob are checked equal across the three (logprob within 1e-4). Run:
``PYTHONPATH=benchmarks python benchmarks/bench_chunk_prefill.py [--positions N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from _util import table
from bench_long_decode import new_row, prompt_ids
from transformers import DynamicCache

from areal_runtime.engine.local import decode_attention
from areal_runtime.engine.local.batching import BatchRunner, ChunkedPrefill
from areal_runtime.models.default_model import load_default_model


def prefill(runner: BatchRunner, ids: list[int], chunk: int) -> tuple[float, int, float]:
    """Seconds to prefill ``ids`` ``chunk`` tokens at a time; the first token and its logprob."""
    row = new_row(ids)
    job = ChunkedPrefill(row=row, cache=DynamicCache(), done=0)
    start = time.perf_counter()
    while not runner.prefill_chunk(job, 0, chunk):
        pass
    return time.perf_counter() - start, row.tokens[0], row.logprobs[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=26000)
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, tokenizer = load_default_model()
    assert decode_attention.use_decode_sdpa(model)
    runner = BatchRunner(model, pad_id=0, decode=lambda _: "", raw_logprobs=False, seed=0)
    ids = prompt_ids(tokenizer, args.positions)
    fast = decode_attention.chunk_after_cache
    cases = {
        "masked": (lambda *_: False, args.chunk),
        "chunk_sdpa": (fast, args.chunk),
        "whole": (fast, args.positions),
    }
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    firsts = set()
    logprobs = []
    for _ in range(args.rounds):
        for name, (check, chunk) in cases.items():
            decode_attention.chunk_after_cache = check
            took, token, logprob = prefill(runner, ids, chunk)
            seconds[name].append(took)
            firsts.add(token)
            logprobs.append(logprob)
    decode_attention.chunk_after_cache = fast
    assert len(firsts) == 1, f"first tokens differ: {firsts}"
    spread = max(logprobs) - min(logprobs)
    assert spread < 1e-4, f"first logprobs differ by {spread}"
    print(
        f"positions {args.positions}, chunks of {args.chunk}, {args.rounds} rounds (median), "
        f"threads 1, load {os.getloadavg()[0]:.1f} at the end, first token equal, "
        f"logprobs within {spread:.1e}"
    )
    base = statistics.median(seconds["masked"])
    rows = [
        [name, f"{statistics.median(s):.2f}", f"{statistics.median(s) / base:.2f}x"]
        for name, s in seconds.items()
    ]
    print(table(["prefill", "s (median)", "vs masked"], rows))


if __name__ == "__main__":
    main()
