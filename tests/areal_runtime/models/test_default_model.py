# SPDX-License-Identifier: Apache-2.0
"""The embedded default model and the offline tokenizers."""

import json

import pytest
import torch

from areal_runtime.models import default_model
from areal_runtime.models.default_model import (
    arithmetic_reward,
    load_default_model,
    load_sample_dataset,
    sample_dataset_path,
    save_default_model,
)
from areal_runtime.models.tokenizers import qwen3_tokenizer, tiny_tokenizer


def test_tiny_tokenizer_round_trips_and_splits_digits():
    tok = tiny_tokenizer()
    for text in ("What is 123+45?", "héllo 你好 <tool_call>", "def f(x):\n    return x"):
        assert tok.decode(tok.encode(text)) == text
    assert [tok.decode([t]) for t in tok.encode("407")] == ["4", "0", "7"]
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert tok.eos_token_id != tok.pad_token_id


def test_chat_template_with_and_without_tools():
    tok = tiny_tokenizer()
    plain = tok.apply_chat_template(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert (
        plain
        == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    tools = [{"type": "function", "function": {"name": "calc", "parameters": {}}}]
    call = {"type": "function", "function": {"name": "calc", "arguments": '{"x": 1}'}}
    text = tok.apply_chat_template(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
        ],
        tools=tools,
        tokenize=False,
    )
    assert '"name": "calc"' in text.split("</tools>")[0]
    assert '<tool_call>{"name": "calc", "arguments": {"x": 1}}</tool_call><|im_end|>' in text


def test_qwen3_tokenizer_loads_offline():
    tok = qwen3_tokenizer()
    assert len(tok) > 150_000 and tok.eos_token == "<|im_end|>"
    assert "<|im_start|>assistant" in tok.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )


@pytest.fixture(scope="module")
def model_and_tok():
    torch.set_num_threads(1)
    return load_default_model()


def greedy_answer(model, tok, row) -> str:
    prompt = tok.apply_chat_template(
        row["messages"], add_generation_prompt=True, tokenize=True, return_dict=False
    )
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=6, do_sample=False,
            eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        )  # fmt: skip
    return tok.decode(out[0, len(prompt) :], skip_special_tokens=True)


def test_default_model_answers_held_out_arithmetic(model_and_tok):
    model, tok = model_and_tok
    rows = load_sample_dataset()
    assert len(rows) == 64 and all({"messages", "answer"} <= set(r) for r in rows)
    correct = sum(greedy_answer(model, tok, r).strip() == r["answer"] for r in rows[:32])
    # measured 0.94 on 100 held-out pairs when trained; demand well above chance
    assert correct >= 24


def test_save_default_model_is_a_normal_hf_directory(tmp_path, model_and_tok):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tok = model_and_tok
    path = save_default_model(tmp_path / "copy")
    assert json.loads((path / "config.json").read_text())["model_type"] == "qwen3"
    loaded = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    loaded_tok = AutoTokenizer.from_pretrained(str(path))
    row = load_sample_dataset()[0]
    assert greedy_answer(loaded, loaded_tok, row) == greedy_answer(model, tok, row)


def test_arithmetic_reward_uses_the_last_integer():
    assert arithmetic_reward("p", "The answer is 12", [], [], answer="12") == 1.0
    assert arithmetic_reward("p", "12 no 13", [], [], answer="12") == 0.0
    assert arithmetic_reward("p", "none", [], [], answer="12") == 0.0
    assert sample_dataset_path().suffix == ".jsonl"


def test_missing_weights_are_explained(tmp_path, monkeypatch):
    monkeypatch.setattr(default_model, "MODEL_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="train_default"):
        load_default_model()
