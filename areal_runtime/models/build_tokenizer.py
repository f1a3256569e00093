# SPDX-License-Identifier: Apache-2.0
"""Rebuild the shipped tiny tokenizer: ``python -m areal_runtime.models.build_tokenizer``.

A byte-level BPE trained on arithmetic chat turns and some plain English and code, with digits
split one per token so the default model can learn arithmetic digit by digit.
"""

from __future__ import annotations

import random

from areal_runtime.models.tokenizers import SPECIAL_TOKENS, TOKENIZER_DIR, VOCAB_SIZE

_ENGLISH = """The quick brown fox jumps over the lazy dog. What is the answer? The answer is
correct. That is wrong, try again. Please think step by step and give the final answer.
You are a helpful assistant. Use the tools when needed. The weather today is sunny and warm.
def add(a, b): return a + b. import asyncio; await client.chat.completions.create(model=model)
Hello world! How are you? I am fine, thank you. Let me check that for you. Result: done."""


def training_corpus(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    lines = _ENGLISH.split("\n") * 20
    for _ in range(2000):
        a, b = rng.randint(0, 99), rng.randint(0, 99)
        lines.append(
            f"<|im_start|>user\nWhat is {a}+{b}?<|im_end|>\n<|im_start|>assistant\n{a + b}<|im_end|>"
        )
    return lines


def build() -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_corpus(), trainer)
    TOKENIZER_DIR.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(TOKENIZER_DIR / "tokenizer.json"))
    print(f"wrote {TOKENIZER_DIR / 'tokenizer.json'} ({tokenizer.get_vocab_size()} tokens)")


if __name__ == "__main__":
    build()
