# SPDX-License-Identifier: Apache-2.0
"""AReaL's GSM8K reward: the completion's final answer checked by ``math_verify``."""

from __future__ import annotations

import logging
from typing import Any

from areal_runtime.reward import get_math_verify_worker

logger = logging.getLogger("areal_runtime.reward.gsm8k")


def gsm8k_reward_fn(
    prompt: Any, completions: Any, prompt_ids: Any, completion_ids: Any, answer: Any, **_: Any
) -> float:
    """1.0 when ``completions`` contains ``answer`` as its answer (AReaL's reward contract)."""
    try:
        return get_math_verify_worker().verify(str(completions), str(answer))
    except Exception:  # e.g. an object whose str() raises: a reward must not end the episode
        logger.warning("gsm8k_reward_fn failed; scored 0.0", exc_info=True)
        return 0.0
