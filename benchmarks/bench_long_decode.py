# SPDX-License-Identifier: Apache-2.0
"""One decode step at a long context on the embedded model, against this CPU's bound.

The prompt is the captured Claude Code CLI request (tests/.../claude_code_cli/000.json) as the
embedded tokenizer reads it, cut to ``--positions`` tokens (26,000 by default), prefilled once.
From that KV cache, in one run and interleaved step by step so load hits every figure alike:

* **before**: the decode step as the engine ran it until now: transformers' ``DynamicCache``
  (``torch.cat`` of the whole cache every step) and its SDPA (``enable_gqa`` for one query);
* **after**: ``BatchRunner.decode_step`` (in-place cache, packed-GQA decode attention);
* **bound**: a sum over a tensor as large as the KV cache (layers x 2 x kv_heads x head_dim x
  positions x 4 bytes), the least a step must read;
* the parts of the after step: attention alone over the four layers' cache, and the same step
  at 64 positions (the fixed cost: Python, the weights, sampling).

Greedy tokens of before and after are checked equal and their logprobs within 1e-4. Run:
``PYTHONPATH=benchmarks python benchmarks/bench_long_decode.py [--positions 26000] [--steps 40]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch
from _util import table
from transformers import DynamicCache

from areal_runtime.engine.local.batching import BatchRunner, BatchState, Row
from areal_runtime.engine.local.decode_attention import decode_sdpa
from areal_runtime.engine.local.sampling import SamplingParams
from areal_runtime.models.default_model import load_default_model

CAPTURED = Path(__file__).parents[1] / "tests/areal_runtime/experimental/openai/client_requests"


def prompt_ids(tokenizer, positions: int) -> list[int]:
    """Claude Code's first request as text, tokenized, repeated if short, cut to ``positions``."""
    body = json.loads((CAPTURED / "claude_code_cli/000.json").read_text())["body"]
    ids = tokenizer.encode(json.dumps(body, ensure_ascii=False))
    while len(ids) < positions:
        ids = ids + ids
    return ids[:positions]


def new_row(prompt: list[int]) -> Row:
    return Row(
        prompt=prompt,
        budget=1 << 20,
        params=SamplingParams(greedy=True, temperature=1.0, top_p=1.0, top_k=1 << 20),
        stop_ids=set(),
        stop_strings=[],
        min_new_tokens=0,
        on_done=lambda *_: None,
    )


def copy_cache(cache: DynamicCache) -> DynamicCache:
    return DynamicCache(
        ddp_cache_data=[(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    )


def old_step(runner: BatchRunner, state: BatchState) -> None:
    """The decode step before this change: no in-place cache, transformers' own attention."""
    assert state.mask is not None and state.cache is not None
    last = torch.tensor([[r.tokens[-1]] for r in state.rows])
    positions = state.mask.sum(-1, keepdim=True)
    state.mask = torch.cat([state.mask, state.mask.new_ones(len(state.rows), 1)], dim=1)
    logits = runner._forward(last, state.mask, positions, state.cache)
    runner._emit(state.rows, logits, 0)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=26000)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    model, tokenizer = load_default_model()
    stock = copy.deepcopy(model)  # stays on transformers' sdpa
    new_runner = BatchRunner(model, pad_id=0, decode=lambda _: "", raw_logprobs=False, seed=0)
    old_runner = BatchRunner(stock, pad_id=0, decode=lambda _: "", raw_logprobs=False, seed=0)
    stock.set_attn_implementation("sdpa")
    ids = prompt_ids(tokenizer, args.positions)
    started = time.perf_counter()
    first = new_row(ids)
    cache, mask = old_runner.prefill([first], 0)
    prefill_s = time.perf_counter() - started

    states = {}
    for name in ("before", "after"):
        row = new_row(ids)
        row.tokens, row.logprobs, row.versions = [*first.tokens], [*first.logprobs], [0]
        states[name] = BatchState()
        states[name].merge([row], copy_cache(cache), mask.clone())
    short = BatchState()
    short_row = new_row(ids[:64])
    short_cache, short_mask = new_runner.prefill([short_row], 0)
    short.merge([short_row], short_cache, short_mask)

    config = model.config
    kv_bytes = (
        (config.num_hidden_layers * 2 * config.num_key_value_heads * config.head_dim)
        * args.positions
        * 4
    )
    probe = torch.randn(kv_bytes // 4)
    layers = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    attn = model.model.layers[0].self_attn
    query = torch.randn(1, config.num_attention_heads, 1, config.head_dim)

    def attention_alone() -> None:
        with torch.inference_mode():
            for keys, values in layers:
                decode_sdpa(attn, query, keys, values, None, scaling=attn.scaling)

    figures: dict[str, list[float]] = {k: [] for k in ("before", "after", "bound", "attn", "64")}
    for _ in range(args.steps):
        figures["before"].append(timed(lambda: old_step(old_runner, states["before"])))
        figures["after"].append(timed(lambda: new_runner.decode_step(states["after"], 0)))
        figures["bound"].append(timed(probe.sum))
        figures["attn"].append(timed(attention_alone))
        figures["64"].append(timed(lambda: new_runner.decode_step(short, 0)))

    before, after = states["before"].rows[0], states["after"].rows[0]
    assert before.tokens == after.tokens, "greedy tokens differ"
    worst = max(abs(a - b) for a, b in zip(before.logprobs, after.logprobs, strict=True))
    assert worst < 1e-4, f"logprobs differ by {worst}"
    ms = {k: statistics.median(v) * 1e3 for k, v in figures.items()}
    bound = ms["bound"]
    print(
        f"positions {args.positions}, KV cache {kv_bytes / 1e6:.1f} MB "
        f"({config.num_hidden_layers} layers x 2 x {config.num_key_value_heads} kv heads x "
        f"{config.head_dim} dims x 4 B), prefill {prefill_s:.1f} s, {args.steps} steps, "
        f"threads {args.threads}, load {os.getloadavg()[0]:.1f} at the end, "
        f"bandwidth {kv_bytes / bound / 1e6:.1f} GB/s, tokens equal, logprobs within {worst:.1e}"
    )
    rows = [
        ["before: DynamicCache + transformers SDPA", f"{ms['before']:.1f}", f"{ms['before'] / bound:.1f}x"],
        ["after: BatchRunner.decode_step", f"{ms['after']:.1f}", f"{ms['after'] / bound:.1f}x"],
        ["  of which attention (4 layers)", f"{ms['attn']:.1f}", f"{ms['attn'] / bound:.1f}x"],
        ["  the same step at 64 positions", f"{ms['64']:.1f}", ""],
        ["bound: sum over the KV cache's bytes", f"{bound:.1f}", "1.0x"],
    ]  # fmt: skip
    print(table(["decode step (median)", "ms", "vs bound"], rows))


if __name__ == "__main__":
    main()
