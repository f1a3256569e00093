# SPDX-License-Identifier: Apache-2.0
"""The learner's forward and backward on a tool agent's batch: what each saving is worth.

A batch shaped like a ``MathToolAgent`` step of ``areal-devkit train`` (8 questions x 8
samples; a start of ``--shared`` tokens every row has: AReaL's instructions and six tool
signatures; 45 of 64 episodes call a tool, so they export a turn-1 row that is the start of
their turn-2 row; about 27 trained tokens a row), on the embedded model, in two minibatches as
train's default. Four ways, side by side in one process, one torch thread:

1. every row, logits at every position (the forward before the savings);
2. logits at the trained positions only;
3. and a row inside another row read from that row's forward;
4. and the shared start run once, each row continued from its key/value cache.

    PYTHONPATH=. python benchmarks/bench_train_forward.py [--shared 600] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from unittest import mock

import torch
from _util import median_time, table

from areal_runtime.models.default_model import load_default_model
from areal_runtime.trainer import logprobs


def agent_batch(shared: int, vocab: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """``(input_ids, attention_mask, loss_mask)`` right-padded, rows as an agent exports them."""
    rng = random.Random(seed)
    start = [rng.randrange(3, vocab) for _ in range(shared)]
    rows: list[tuple[list[int], list[int]]] = []
    for group in range(8):
        question = start + [rng.randrange(3, vocab) for _ in range(20 + group)]
        for sample in range(8):
            call = [rng.randrange(3, vocab) for _ in range(24)]
            if (group * 8 + sample) % 64 >= 45:  # answered without a tool: one row
                rows.append((question + call, [0] * len(question) + [1] * len(call)))
                continue
            result = [rng.randrange(3, vocab) for _ in range(15)]
            answer = [rng.randrange(3, vocab) for _ in range(10)]
            turn1 = question + call
            rows.append((turn1, [0] * len(question) + [1] * len(call)))
            rows.append((turn1 + result + answer, [0] * (len(turn1) + 15) + [1] * 10))
    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    attn = torch.zeros(len(rows), width, dtype=torch.bool)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    for i, (row, trained) in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        attn[i, : len(row)] = True
        mask[i, : len(row)] = torch.tensor(trained, dtype=torch.bool)
    return ids, attn, mask


def step(model: torch.nn.Module, batch: tuple[torch.Tensor, ...], forward: Callable) -> None:
    """Two minibatches, each a forward and a backward of the trained tokens' logprobs."""
    ids, attn, mask = batch
    order = torch.randperm(ids.shape[0], generator=torch.Generator().manual_seed(0))
    for idx in (order[0::2], order[1::2]):
        model.zero_grad(set_to_none=True)
        logp, _ = forward(model, ids[idx], attn[idx], 1.0, mask[idx])
        (logp * mask[idx]).sum().backward()


def ways() -> dict[str, Callable]:
    no_start = mock.patch.object(logprobs, "MIN_SHARED_PREFIX", 10**9)

    def every_position(model, ids, attn, temperature, where):
        return logprobs.token_logprobs(model, ids, attn, temperature)

    def trained_positions(model, ids, attn, temperature, where):
        with no_start:
            return logprobs.token_logprobs(model, ids, attn, temperature, where)

    def rows_inside_rows(model, ids, attn, temperature, where):
        with no_start:
            return logprobs.trained_logprobs(model, ids, attn, temperature, where)

    return {
        "1. every row, every position": every_position,
        "2. trained positions only": trained_positions,
        "3. + rows inside rows shared": rows_inside_rows,
        "4. + the common start once": logprobs.trained_logprobs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=int, default=600, help="tokens every row starts with")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, _ = load_default_model()
    model.train()
    batch = agent_batch(args.shared, model.config.vocab_size)
    ids, attn, mask = batch
    print(
        f"{ids.shape[0]} rows, {int(attn.sum())} tokens, {int(mask.sum())} trained, "
        f"{args.shared} shared by every row"
    )
    rows, base = [], None
    for name, forward in ways().items():
        seconds = median_time(lambda f=forward: step(model, batch, f), repeats=args.repeats)
        base = base or seconds
        rows.append([name, f"{seconds:.2f}", f"{base / seconds:.1f}x"])
    print(table(["forward", "s per step (median)", "speed-up"], rows))


if __name__ == "__main__":
    main()
