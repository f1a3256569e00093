# SPDX-License-Identifier: Apache-2.0
"""AReaL's GSM8K reward: the completion's final answer checked by ``math_verify``."""

from __future__ import annotations

from typing import Any

from areal_runtime.reward import get_math_verify_worker


def gsm8k_reward_fn(
    prompt: Any, completions: Any, prompt_ids: Any, completion_ids: Any, answer: Any, **_: Any
) -> float:
    """1.0 when ``completions`` contains ``answer`` as its answer (AReaL's reward contract)."""
    return get_math_verify_worker().verify(str(completions), str(answer))
