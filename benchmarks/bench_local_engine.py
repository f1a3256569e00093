# SPDX-License-Identifier: Apache-2.0
"""LocalEngine continuous batching vs one-at-a-time ``model.generate``, one torch thread.

For a ~14M-parameter model (8 x 384, 1k vocab, random weights) and the embedded default model:
tokens/s and requests/s at 1, 8, 32 and 64 concurrent requests (64 new tokens each, EOS
ignored) next to sequential ``generate`` on the same prompts, measured in one run; and the
event loop's worst heartbeat lag while serving 64 requests. Run:
``python benchmarks/bench_local_engine.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import torch
from _util import table

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import LocalEngine

NEW_TOKENS = 64


def model_14m():
    from transformers import AutoModelForCausalLM, Qwen3Config

    from areal_runtime.models.tokenizers import tiny_tokenizer

    config = Qwen3Config(
        vocab_size=1024, hidden_size=384, intermediate_size=1152, num_hidden_layers=8,
        num_attention_heads=6, num_key_value_heads=2, head_dim=64,
        tie_word_embeddings=True, max_position_embeddings=1024,
    )  # fmt: skip
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval(), tiny_tokenizer()


def prompts(tok, n: int) -> list[list[int]]:
    return [
        tok.apply_chat_template(
            [{"role": "user", "content": f"What is {i}+{2 * i}? Think about it."}],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
        for i in range(n)
    ]


def sequential(model, batch: list[list[int]]) -> float:
    start = time.perf_counter()
    with torch.inference_mode():
        for p in batch:
            model.generate(
                torch.tensor([p]), max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
            )  # fmt: skip
    return time.perf_counter() - start


async def heartbeat(lags: list[float], period: float = 0.005) -> None:
    """Record how late a 5 ms sleep wakes up: the loop's lag."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - start - period)


async def served(engine: LocalEngine, batch: list[list[int]]) -> tuple[float, float]:
    g = GenerationHyperparameters(max_new_tokens=NEW_TOKENS, ignore_eos=True, temperature=1.0)
    lags: list[float] = []
    beat = asyncio.create_task(heartbeat(lags))
    start = time.perf_counter()
    await asyncio.gather(*(engine.agenerate(ModelRequest(input_ids=p, gconfig=g)) for p in batch))
    elapsed = time.perf_counter() - start
    beat.cancel()
    return elapsed, max(lags, default=0.0)


def bench(name: str, model, tok, levels: list[int]) -> list[list[object]]:
    rows = []
    engine = LocalEngine(model, tok, max_batch=64)
    asyncio.run(served(engine, prompts(tok, 2)))  # warm up
    base_n = min(8, max(levels))
    seq_s = sequential(model, prompts(tok, base_n)) / base_n
    seq_tps = NEW_TOKENS / seq_s
    for n in levels:
        elapsed, lag = asyncio.run(served(engine, prompts(tok, n)))
        tps = n * NEW_TOKENS / elapsed
        rows.append(
            [
                name,
                n,
                f"{tps:.0f}",
                f"{n / elapsed:.2f}",
                f"{seq_tps:.0f}",
                f"{tps / seq_tps:.1f}x",
                f"{lag * 1000:.1f}",
            ]
        )
    engine.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="levels 1 and 8 only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    levels = [1, 8] if args.quick else [1, 8, 32, 64]
    from areal_runtime.models.default_model import load_default_model

    rows = bench("14M (8x384, V=1024)", *model_14m(), levels)
    rows += bench("embedded default (0.9M)", *load_default_model(), levels)
    print(
        table(
            [
                "model",
                "concurrent",
                "engine tok/s",
                "engine req/s",
                "sequential generate tok/s",
                "speed-up",
                "worst loop lag ms",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
