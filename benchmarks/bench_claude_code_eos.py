# SPDX-License-Identifier: Apache-2.0
"""Does the embedded model end its turn on Claude Code's own request? (issue 39, item 2)

The Claude Code CLI's captured first request (``client_requests/claude_code_cli/000.json``: its
system prompt, a dozen tools, the question inside a user turn of reminders), with its question
replaced by a fresh ``What is a+b?`` for each prompt, rendered as ``serve`` renders a Messages
request; then ``--samples`` continuations of each at temperature 1, as
``tool_skill_eval.eos_steps`` draws them: the share that write their EOS within 64 and within
128 new tokens, and how many tokens the replies took.

    PYTHONPATH=.:benchmarks python benchmarks/bench_claude_code_eos.py [--prompts 4] [--samples 12]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from pathlib import Path

import torch
from _util import CLIENT_REQUESTS, asking, table

from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import (
    parse_messages_request,
)
from areal_runtime.experimental.openai.proxy.generation import render_prompt
from areal_runtime.models.default_model import MODEL_DIR, load_default_model
from areal_runtime.models.tool_skill_eval import (
    EOS_NEW_TOKENS,
    LONG_EOS_NEW_TOKENS,
    eos_steps,
)

CAPTURED = CLIENT_REQUESTS / "claude_code_cli/000.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=4, help="questions, each its own prompt")
    parser.add_argument("--samples", type=int, default=12, help="T=1 continuations a prompt")
    parser.add_argument("--model", type=Path, default=MODEL_DIR, help="model folder")
    parser.add_argument("--seed", type=int, default=39)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, tok = load_default_model(args.model)
    body = json.loads(CAPTURED.read_text())["body"]
    rng = random.Random(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    rows, steps = [], []
    for _ in range(args.prompts):
        a, b = rng.randint(1, 99), rng.randint(1, 99)
        request = parse_messages_request(asking(copy.deepcopy(body), f"What is {a}+{b}?"), tok)
        prompt = render_prompt(tok, request)
        start = time.perf_counter()
        ended = eos_steps(model, tok, prompt, args.samples, gen)
        steps += ended
        done = [s for s in ended if s is not None]
        rows.append([
            f"What is {a}+{b}?",
            len(prompt),
            f"{sum(s <= EOS_NEW_TOKENS for s in done)} of {len(ended)}",
            f"{len(done)} of {len(ended)}",
            statistics.median(done) if done else "-",
            f"{time.perf_counter() - start:.1f}",
        ])  # fmt: skip
    head = [
        "question",
        "prompt tokens",
        f"EOS within {EOS_NEW_TOKENS}",
        f"within {LONG_EOS_NEW_TOKENS}",
        "median new tokens",
        "s",
    ]
    print(table(head, rows))
    within = sum(s is not None and s <= EOS_NEW_TOKENS for s in steps)
    print(
        f"all: EOS within {EOS_NEW_TOKENS} new tokens in {within} of {len(steps)} samples "
        f"({within / len(steps):.2f}), within {LONG_EOS_NEW_TOKENS} in "
        f"{sum(s is not None for s in steps)}; model {args.model}"
    )


if __name__ == "__main__":
    main()
