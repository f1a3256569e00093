# SPDX-License-Identifier: Apache-2.0
"""concat_padded_tensors vs AReaL's pad-each-then-cat, on 256 trajectories of 100-4000 tokens.

Run: ``python benchmarks/bench_concat.py``. Prints a Markdown table (median of 7 runs).
"""

from __future__ import annotations

import random

import torch
from _util import median_time, table

from areal_runtime.utils.data import concat_padded_tensors


def trajectories(n: int = 256, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        length = rng.randint(100, 4000)
        out.append(
            {
                "input_ids": torch.randint(0, 150_000, (1, length), dtype=torch.int32),
                "loss_mask": torch.ones(1, length, dtype=torch.int32),
                "logprobs": torch.randn(1, length),
                "versions": torch.zeros(1, length, dtype=torch.int32),
                "attention_mask": torch.ones(1, length, dtype=torch.bool),
                "rewards": torch.randn(1),
            }
        )
    return out


def pad_each_then_cat(dicts: list[dict[str, torch.Tensor]], pad_value: float = 0.0) -> dict:
    """The straightforward approach (as AReaL does it): pad every tensor, then torch.cat."""
    result = {}
    for key in dicts[0]:
        tensors = [d[key] for d in dicts]
        if tensors[0].dim() <= 1:
            result[key] = torch.cat(tensors)
            continue
        max_len = max(t.shape[1] for t in tensors)
        pad = 0 if key == "attention_mask" else pad_value
        padded = [torch.nn.functional.pad(t, (0, max_len - t.shape[1]), value=pad) for t in tensors]
        result[key] = torch.cat(padded, dim=0)
    return result


def main() -> None:
    torch.set_num_threads(1)
    data = trajectories()
    ours = concat_padded_tensors(data)
    base = pad_each_then_cat(data)
    assert all(torch.equal(ours[k], base[k]) for k in base), "results differ"
    t_ours = median_time(lambda: concat_padded_tensors(data), repeats=7)
    t_base = median_time(lambda: pad_each_then_cat(data), repeats=7)
    print(
        table(
            ["implementation", "median ms", "ratio to baseline"],
            [
                ["pad-each-then-cat (AReaL's approach)", f"{t_base * 1000:.1f}", "1.00"],
                [
                    "areal_runtime concat_padded_tensors",
                    f"{t_ours * 1000:.1f}",
                    f"{t_ours / t_base:.2f}",
                ],
            ],
        )
    )


if __name__ == "__main__":
    main()
