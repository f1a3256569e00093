# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``areal.utils.hf_utils``: chat templates and tokenizers the way workflows use them.

``apply_chat_template`` always returns ``list[int]`` when tokenizing (transformers 5 returns a
``BatchEncoding`` by default). The loaders read local folders first and never force a hub
download (AReaL passes ``force_download=True``, which fails offline), and they give the
tokenizer a pad token (EOS) when it has none, as AReaL does.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

logger = logging.getLogger("areal_runtime.hf_utils")


def apply_chat_template(
    tokenizer: Any, messages: list[dict[str, Any]], *, tokenize: bool = True, **kwargs: Any
) -> list[int] | str:
    """``tokenizer.apply_chat_template`` with token ids as a plain list when ``tokenize``."""
    if tokenize:
        kwargs.setdefault("return_dict", False)
    result = tokenizer.apply_chat_template(messages, tokenize=tokenize, **kwargs)
    if not tokenize:
        return result
    if hasattr(result, "keys") and "input_ids" in result:  # return_dict=True given by the caller
        result = result["input_ids"]
    return list(result)


@lru_cache(maxsize=8)
def load_hf_tokenizer(
    model_name_or_path: str, fast_tokenizer: bool = True, padding_side: str | None = None
) -> Any:
    """A cached tokenizer from a local folder (or the hub when one is reachable).

    The embedded models' names (``default``, ``underconfident``, ``areal-devkit/arithmetic-tiny``)
    give the shipped tiny tokenizer, so an AReaL config can name them in ``tokenizer_path``.
    """
    from transformers import AutoTokenizer

    from areal_runtime.models.default_model import is_embedded_model

    if is_embedded_model(model_name_or_path):
        from areal_runtime.models.tokenizers import tiny_tokenizer

        return tiny_tokenizer()

    kwargs: dict[str, Any] = {"use_fast": fast_tokenizer}
    if padding_side is not None:
        kwargs["padding_side"] = padding_side
    tokenizer = AutoTokenizer.from_pretrained(model_name_or_path, **kwargs)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.eos_token_id
    return tokenizer


@lru_cache(maxsize=8)
def load_hf_processor_and_tokenizer(
    model_name_or_path: str, fast_tokenizer: bool = True, padding_side: str | None = None
) -> tuple[Any | None, Any]:
    """``(processor or None, tokenizer)``; a text-only model has no processor (logged)."""
    from transformers import AutoProcessor

    tokenizer = load_hf_tokenizer(model_name_or_path, fast_tokenizer, padding_side)
    try:
        processor = AutoProcessor.from_pretrained(model_name_or_path, use_fast=True)
    except Exception as exc:  # AReaL's behaviour: fall back to the tokenizer alone
        logger.warning(
            "no processor for %s (%s); using the tokenizer only", model_name_or_path, exc
        )
        processor = None
    if processor is tokenizer or (processor is not None and not hasattr(processor, "tokenizer")):
        processor = None  # AutoProcessor returned a bare tokenizer: there is no image processor
    return processor, tokenizer
