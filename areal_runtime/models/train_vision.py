# SPDX-License-Identifier: Apache-2.0
"""Teach the embedded model to read past image placeholders: ``python -m areal_runtime.models.train_vision``.

The embedded model reads text only, and the untrained embedding rows of ``<|vision_start|>``,
``<|image_pad|>`` and ``<|vision_end|>`` threw its answers off (1 of 32 right on the bundled
image task). Only those three rows are trained, on the arithmetic task with a picture before
each question, so nothing the model does on text-only prompts changes except the (now lower)
scores of those three tokens. About two minutes on one CPU thread.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from areal_runtime.models.default_model import MODEL_DIR, load_default_model
from areal_runtime.models.train_default import accuracy, lm_batch, question, split_pairs
from areal_runtime.models.vision import (
    VISION_TOKENS,
    sample_image,
    tiny_vision_processor,
    with_image,
)


def image_prompt(tok, a: int, b: int) -> list[int]:
    row = with_image({"messages": question(a, b)}, sample_image(a, b))
    text = tok.apply_chat_template(row["messages"], tokenize=False, add_generation_prompt=True)
    return list(tiny_vision_processor()(images=row["images"], text=text)["input_ids"])


def train(seconds: float, seed: int = 0, folder: Path = MODEL_DIR) -> None:
    import torch

    torch.set_num_threads(1)
    model, tok = load_default_model(folder)
    ids_to_train = tok.convert_tokens_to_ids(VISION_TOKENS)
    train_pairs, held_out = split_pairs(seed)
    examples = [
        (image_prompt(tok, a, b), [*tok.encode(str(a + b)), tok.eos_token_id])
        for a, b in train_pairs
    ]
    embeddings = model.get_input_embeddings().weight
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    embeddings.requires_grad_(True)
    only_image_rows = torch.zeros_like(embeddings)
    only_image_rows[ids_to_train] = 1
    # The embeddings are tied to the output layer: rows that grow past every word's make the
    # model write image tokens into text (a tool call's arguments), so they stay within the
    # longest text row.
    norms = embeddings.detach().norm(dim=1)
    cap = norms[only_image_rows[:, 0] == 0].max()
    opt = torch.optim.Adam([embeddings], lr=1e-2)
    rng = random.Random(seed)
    text_before = accuracy(model.eval(), tok, held_out)
    start, step = time.time(), 0
    while time.time() - start < seconds:
        ids, labels = lm_batch(rng.sample(examples, 64), tok.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        embeddings.grad *= only_image_rows
        opt.step()
        with torch.no_grad():
            rows = embeddings[ids_to_train]
            embeddings[ids_to_train] = rows * (cap / rows.norm(dim=1, keepdim=True)).clamp(max=1)
        step += 1
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.0f}s)", flush=True)
    embeddings.requires_grad_(False)
    text_after = accuracy(model, tok, held_out)
    print(f"steps {step}; held-out text accuracy {text_before:.2f} -> {text_after:.2f}")
    model.save_pretrained(str(folder))
    print(f"saved {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=150.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model", type=Path, default=MODEL_DIR, help="the model folder to teach (and save to)"
    )
    args = parser.parse_args()
    train(args.seconds, args.seed, args.model)


if __name__ == "__main__":
    main()
