# SPDX-License-Identifier: Apache-2.0
import pytest
import torch

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.models.tokenizers import tiny_tokenizer

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tok():
    return tiny_tokenizer()


def tiny_qwen3(max_positions: int, seed: int = 0):
    """A tiny random-weight Qwen3 (2 layers x 64) with the tiny tokenizer's vocabulary."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    config = Qwen3Config(
        vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        tie_word_embeddings=True, max_position_embeddings=max_positions,
    )  # fmt: skip
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()


@pytest.fixture(scope="session")
def random_model():
    return tiny_qwen3(256)


def chat_ids(tok, text: str) -> list[int]:
    return tok.apply_chat_template(
        [{"role": "user", "content": text}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
    )


def request(tok, text: str = "What is 2+2?", **gconfig) -> ModelRequest:
    g = GenerationHyperparameters(**gconfig).new_with_stop_and_pad_token_ids(tok)
    return ModelRequest(input_ids=chat_ids(tok, text), gconfig=g, tokenizer=tok)
