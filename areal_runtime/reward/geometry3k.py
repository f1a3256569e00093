# SPDX-License-Identifier: Apache-2.0
"""AReaL's Geometry3K reward: the last ``[answer]`` (or last number) checked by ``math_verify``."""

from __future__ import annotations

import logging
import re
from typing import Any

from areal_runtime.reward import get_math_verify_worker

logger = logging.getLogger("areal_runtime.reward.geometry3k")

_BRACKETED = re.compile(r"\[([^\]]+)\]")
_NUMBER = re.compile(r"-?\d*\.?\d+")


def extract_answer(pred_str: str, use_last_number: bool = True) -> str:
    """The text inside the last ``[...]``; else the last number (commas ignored); else ``""``."""
    bracketed = _BRACKETED.findall(pred_str)
    if bracketed:
        return bracketed[-1]
    if use_last_number:
        numbers = _NUMBER.findall(pred_str.replace(",", ""))
        if numbers:
            return numbers[-1]
    return ""


def geometry3k_reward_fn(
    prompt: Any, completions: Any, prompt_ids: Any, completion_ids: Any, answer: Any, **_: Any
) -> float:
    """1.0 when the completion's extracted answer equals ``answer`` (an unbracketed answer is
    used whole); never raises, as a reward function inside a rollout must not."""
    try:
        predicted = extract_answer(str(completions))
        expected = extract_answer(str(answer)) or str(answer)
        if not predicted or not expected:
            return 0.0
        return get_math_verify_worker().verify(predicted, expected)
    except Exception:
        logger.warning("geometry3k_reward_fn failed; scored 0.0", exc_info=True)
        return 0.0
