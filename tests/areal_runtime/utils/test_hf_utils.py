# SPDX-License-Identifier: Apache-2.0
"""``areal_runtime.utils.hf_utils`` behaves like AReaL's, offline."""

import pytest

from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.utils.hf_utils import (
    apply_chat_template,
    load_hf_processor_and_tokenizer,
    load_hf_tokenizer,
)

MESSAGES = [{"role": "user", "content": "What is 2+2?"}]


def test_apply_chat_template_returns_token_ids_or_text():
    tok = tiny_tokenizer()
    ids = apply_chat_template(tok, MESSAGES, add_generation_prompt=True)
    text = apply_chat_template(tok, MESSAGES, tokenize=False, add_generation_prompt=True)
    assert isinstance(ids, list) and all(isinstance(i, int) for i in ids)
    assert text.endswith("<|im_start|>assistant\n") and tok.decode(ids) == text
    assert apply_chat_template(tok, MESSAGES, add_generation_prompt=True, return_dict=True) == ids


def test_loaders_read_a_local_folder_cache_and_set_a_pad_token(tmp_path):
    tok = tiny_tokenizer()
    tok.pad_token = None
    tok.save_pretrained(tmp_path)
    loaded = load_hf_tokenizer(str(tmp_path), padding_side="left")
    assert loaded is load_hf_tokenizer(str(tmp_path), padding_side="left")  # cached, as in AReaL
    assert loaded.pad_token_id == loaded.eos_token_id and loaded.padding_side == "left"
    processor, tokenizer = load_hf_processor_and_tokenizer(str(tmp_path))
    assert processor is None  # a text-only folder has no image processor
    assert tokenizer.encode("2+2") == tok.encode("2+2")


def test_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(OSError, match="missing"):
        load_hf_tokenizer(str(tmp_path / "missing"))
