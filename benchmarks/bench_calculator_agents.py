# SPDX-License-Identifier: Apache-2.0
"""Calculator agents spelled fresh: does the model call the tool that does the question's sum?

Whole-call accuracy (name, argument names, values) of the first turn on ``--n`` fresh
``calculator_episodes`` (a seed no training run uses), greedy and sampled at T=1, and at T=1 on
the three bundled agents' requests. AReaL's own wording is measured with the CLI instead
(``areal-devkit run areal.workflow.openai.math_agent:MathToolAgent --engine local``).

    PYTHONPATH=. python benchmarks/bench_calculator_agents.py [--model DIR] [--n 48]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from areal_runtime.models.calculator_episodes import calculator_episode
from areal_runtime.models.default_model import MODEL_DIR
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import BUNDLED, bundled_episode, parsed_call
from areal_runtime.models.tool_skill_eval import prompt_ids


def call_accuracy(model, tok, episodes, greedy: bool, seed: int = 0) -> float:
    """Left-padded batch generation; the share of first turns that are the expected call."""
    import torch

    torch.manual_seed(seed)
    prompts = [prompt_ids(tok, e) for e in episodes]
    width = max(map(len, prompts))
    ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in prompts])
    starts = torch.tensor([width - len(p) for p in prompts])[:, None]
    mask = (torch.arange(width)[None] >= starts).long()
    with torch.no_grad():
        out = model.generate(
            ids, attention_mask=mask, do_sample=not greedy, temperature=1.0, top_p=1.0,
            max_new_tokens=96, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        )  # fmt: skip
    right = 0
    for episode, row in zip(episodes, out[:, width:], strict=True):
        text = tok.decode(row, skip_special_tokens=False)
        right += parsed_call(text.replace(tok.eos_token, "").replace(tok.pad_token, "")) == (
            episode.call
        )
    return right / len(episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=MODEL_DIR)
    parser.add_argument("--n", type=int, default=48)
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(str(args.model), dtype="float32").eval()
    tok = tiny_tokenizer()
    rng = random.Random(777)
    fresh = [calculator_episode(rng) for _ in range(args.n)]
    print("| requests | greedy | T=1 |")
    print("|---|---|---|")
    greedy, sampled = (call_accuracy(model, tok, fresh, g) for g in (True, False))
    print(f"| {args.n} fresh calculator agents | {greedy:.2f} | {sampled:.2f} |")
    for shape in BUNDLED:
        rng = random.Random(9)
        episodes = [bundled_episode(rng, shape) for _ in range(args.n)]
        print(
            f"| {args.n} of the bundled `{shape}` | - | {call_accuracy(model, tok, episodes, False):.2f} |"
        )


if __name__ == "__main__":
    main()
