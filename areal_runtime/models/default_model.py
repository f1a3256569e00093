# SPDX-License-Identifier: Apache-2.0
"""The embedded default model: a ~1M-parameter Qwen3-architecture LM trained on arithmetic.

It ships inside the package (config + safetensors, a few MB), so the runtime, the demo and the
tests run on a fresh machine with no model hub. It answers "What is a+b?" (0 <= a, b <= 30)
with the sum, greedily, most of the time, so demo rewards are informative rather than all zero.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from areal_runtime.models.tokenizers import TOKENIZER_DIR, tiny_tokenizer
from areal_runtime.utils.files import read_jsonl

DEFAULT_MODEL_NAME = "areal-devkit/arithmetic-tiny"
MODEL_DIR = Path(__file__).parent / "data" / "default_model"
# The previous recipe's weights (train_default, then train_tools and train_vision): the start
# of RL on the bundled arithmetic task. Under train's default lr, RL sharpens them back within a
# minute; the tool-reading default model, whose logits are twice as large, rose 0.10 in 100
# steps from the same start (BENCHMARKS.md, "Reading the tool list (issue 39): third round").
ARITHMETIC_MODEL_DIR = Path(__file__).parent / "data" / "arithmetic_model"
UNDERCONFIDENT_MODEL_NAME = "areal-devkit/arithmetic-tiny-underconfident"
UNDERCONFIDENT_SCALE = 0.5
# A tool agent starts from the default model, flattened less: its ~45-token call must be right
# in every token; at 0.55 the bundled agents' episodes start at a reward of about 0.64-0.68 at
# T=1 in train's first steps (0.4-0.5 of their calls right before the third training stage).
TOOL_AGENT_SCALE = 0.55
# ... and learns at a third of train's default lr (3e-4): at 3e-4 its entropy grew from 0.26 to
# 1.2-2.4 within 12 steps and one 20-step run fell 0.54 -> 0.01; at 1e-4 it stayed at 0.13-0.4
# and the reward rose 0.61 -> 0.75 (BENCHMARKS.md, "A tool agent's default lr").
TOOL_AGENT_LR = 1e-4
SAMPLE_DATASET = Path(__file__).parent / "data" / "arithmetic_sample.jsonl"
MAX_OPERAND = 30
# Trained on prompts of a few dozen tokens, but RoPE has no table to outgrow: 64k positions let
# real agent prompts (Claude Code's first request: ~36k tokens with the tiny tokenizer) fit and
# be answered. Short prompts are computed exactly as at 512.
MAX_POSITIONS = 65536
# The longest answer the embedded model gives (its generation_config.max_new_tokens, which
# LocalEngine honours): on a prompt far from its training, such as Claude Code's, it may
# never write its EOS, and clients ask for up to 128k new tokens.
MAX_NEW_TOKENS = 512


def model_config() -> Any:
    """The architecture of the default model (also used to train it)."""
    from transformers import Qwen3Config

    tok = tiny_tokenizer()
    return Qwen3Config(
        vocab_size=512,
        hidden_size=128,
        intermediate_size=384,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        tie_word_embeddings=True,
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )


def load_default_model(folder: Path | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)``: the default model (or the one in ``folder``) in eval mode (fp32)
    and its tokenizer."""
    from transformers import AutoModelForCausalLM

    folder = folder or MODEL_DIR
    weights = folder / "model.safetensors"
    if not weights.exists():
        raise FileNotFoundError(
            f"{weights} is missing from the installed package; rebuild it with "
            "`python -m areal_runtime.models.train_reader --recipe` (the default model) or "
            "`python -m areal_runtime.models.train_default` (the arithmetic model)"
        )
    from transformers.utils import logging as hf_logging

    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a 3 MB model needs no "Loading weights" bar
    try:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()
    return model.eval(), tiny_tokenizer()


def save_default_model(path: str | Path) -> Path:
    """Write the default model as a normal HF directory (config, weights, tokenizer)."""
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    for item in MODEL_DIR.iterdir():
        shutil.copy2(item, target / item.name)
    tiny_tokenizer().save_pretrained(str(target))
    return target


EMBEDDED_NAMES = {
    "default": "default",
    DEFAULT_MODEL_NAME: "default",
    "underconfident": "underconfident",
    UNDERCONFIDENT_MODEL_NAME: "underconfident",
}


def is_embedded_model(name: str) -> bool:
    """Whether ``name`` names an embedded model (``default`` or ``underconfident``)."""
    return name in EMBEDDED_NAMES


def load_underconfident_model(tool_agent: bool = False) -> tuple[Any, Any]:
    """The starting checkpoint of ``areal-devkit train``'s default task.

    The arithmetic model (``ARITHMETIC_MODEL_DIR``) with the weight of its final RMSNorm
    multiplied by ``UNDERCONFIDENT_SCALE`` (0.5): every logit is halved, exactly as if it were
    sampled at temperature 2. It still ranks the right answer first (greedy accuracy is
    unchanged), but sampled at temperature 1 it answers only about 45% of the questions right
    instead of 97%, so RL has a clear, fast signal: the reward rises as the policy grows
    confident again. A tool agent gets the default model scaled by ``TOOL_AGENT_SCALE``
    instead: the tool reading is what it has to use. Deterministic (no seed, no training), so
    it is built on load instead of shipped.
    """
    import torch

    if tool_agent:
        model, tokenizer = load_default_model()
    else:
        model, tokenizer = load_default_model(ARITHMETIC_MODEL_DIR)
    with torch.no_grad():
        model.model.norm.weight.mul_(TOOL_AGENT_SCALE if tool_agent else UNDERCONFIDENT_SCALE)
    return model, tokenizer


def load_embedded_model(name: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for an embedded model name; see :func:`is_embedded_model`."""
    kind = EMBEDDED_NAMES.get(name)
    if kind == "default":
        return load_default_model()
    if kind == "underconfident":
        return load_underconfident_model()
    raise ValueError(f"{name!r} is not an embedded model; use one of {sorted(EMBEDDED_NAMES)}")


def sample_dataset_path() -> Path:
    """The bundled JSONL dataset: ``{"messages": [...], "answer": "8"}`` per line."""
    return SAMPLE_DATASET


def load_sample_dataset() -> list[dict[str, Any]]:
    return read_jsonl(SAMPLE_DATASET)


_LAST_INT = re.compile(r"-?\d+")


def arithmetic_reward(
    prompt: str | None = None,
    completions: str | None = None,
    prompt_ids: Any = None,
    completion_ids: Any = None,
    *,
    answer: Any,
    **_: Any,
) -> float:
    """1.0 when the last integer in the completion equals ``answer``.

    Callable both ways AReaL calls rewards: positionally as RLVR workflows do
    (``prompt, completions, prompt_ids, completion_ids, **data``) and with keywords as agents do
    (``completions=..., answer=...``), so every template variant runs on it with no flags.
    """
    if completions is None:
        raise TypeError(
            "arithmetic_reward needs the completion text: call it as "
            "reward(prompt, completions, prompt_ids, completion_ids, answer=...) or "
            "reward(completions=..., answer=...)"
        )
    found = _LAST_INT.findall(completions)
    return float(bool(found) and found[-1] == str(answer).strip())


__all__ = [
    "DEFAULT_MODEL_NAME",
    "TOKENIZER_DIR",
    "UNDERCONFIDENT_MODEL_NAME",
    "arithmetic_reward",
    "is_embedded_model",
    "load_default_model",
    "load_embedded_model",
    "load_sample_dataset",
    "load_underconfident_model",
    "model_config",
    "sample_dataset_path",
    "save_default_model",
]
