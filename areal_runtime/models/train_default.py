# SPDX-License-Identifier: Apache-2.0
"""Train the embedded arithmetic model: ``python -m areal_runtime.models.train_default``.

A few minutes on one CPU thread. The model learns to answer "What is a+b?" in ChatML; a fixed
set of operand pairs is held out to report generalisation, and the bundled sample dataset is
drawn from the held-out pairs so demo rewards measure more than memorisation.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from areal_runtime.models.default_model import (
    ARITHMETIC_MODEL_DIR,
    MAX_NEW_TOKENS,
    MAX_OPERAND,
    SAMPLE_DATASET,
    model_config,
)
from areal_runtime.models.tokenizers import tiny_tokenizer


def question(a: int, b: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"What is {a}+{b}?"}]


def split_pairs(seed: int = 0) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    pairs = [(a, b) for a in range(MAX_OPERAND + 1) for b in range(MAX_OPERAND + 1)]
    random.Random(seed).shuffle(pairs)
    return pairs[100:], pairs[:100]


def encode_example(tok, a: int, b: int) -> tuple[list[int], list[int]]:
    prompt = tok.apply_chat_template(
        question(a, b), add_generation_prompt=True, tokenize=True, return_dict=False
    )
    answer = [*tok.encode(str(a + b), add_special_tokens=False), tok.eos_token_id]
    return prompt, answer


def accuracy(model, tok, pairs) -> float:
    import torch

    correct = 0
    with torch.no_grad():
        for a, b in pairs:
            prompt, _ = encode_example(tok, a, b)
            out = model.generate(
                torch.tensor([prompt]), max_new_tokens=6, do_sample=False,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
            )  # fmt: skip
            text = tok.decode(out[0, len(prompt) :], skip_special_tokens=True).strip()
            correct += text == str(a + b)
    return correct / len(pairs)


def padded_batch(rows: list[tuple[list[int], list[int]]], pad_id: int) -> tuple[Any, Any]:
    """``(input_ids, labels)`` tensors for ``(ids, labels)`` rows, padded (labels with -100)."""
    import torch

    length = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), length), pad_id)
    labels = torch.full((len(rows), length), -100)
    for row, (seq, lab) in enumerate(rows):
        ids[row, : len(seq)] = torch.tensor(seq)
        labels[row, : len(lab)] = torch.tensor(lab)
    return ids, labels


def lm_batch(batch: list[tuple[list[int], list[int]]], pad_id: int) -> tuple[Any, Any]:
    """``(input_ids, labels)`` for ``(prompt, answer)`` pairs: the loss only on the answers."""
    return padded_batch([(p + a, [-100] * len(p) + a) for p, a in batch], pad_id)


def train(seconds: float, seed: int = 0) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    tok = tiny_tokenizer()
    model = AutoModelForCausalLM.from_config(model_config(), dtype=torch.float32)
    train_pairs, held_out = split_pairs(seed)
    examples = [encode_example(tok, a, b) for a, b in train_pairs]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    rng = random.Random(seed)
    start, step = time.time(), 0
    while time.time() - start < seconds:
        ids, labels = lm_batch(rng.sample(examples, 64), tok.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.0f}s)", flush=True)
    model.eval()
    train_acc = accuracy(model, tok, train_pairs[:100])
    held_acc = accuracy(model, tok, held_out)
    print(f"steps {step}; greedy accuracy: train {train_acc:.2f}, held-out {held_acc:.2f}")
    ARITHMETIC_MODEL_DIR.mkdir(parents=True, exist_ok=True)
    model.generation_config.max_new_tokens = MAX_NEW_TOKENS
    model.save_pretrained(str(ARITHMETIC_MODEL_DIR))
    with SAMPLE_DATASET.open("w", encoding="utf-8") as f:
        for a, b in held_out[:64]:
            f.write(json.dumps({"messages": question(a, b), "answer": str(a + b)}) + "\n")
    print(f"saved {ARITHMETIC_MODEL_DIR} and {SAMPLE_DATASET}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=240.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.seconds, args.seed)


if __name__ == "__main__":
    main()
