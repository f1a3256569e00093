# SPDX-License-Identifier: Apache-2.0
"""AReaL's CLEVR-Count-70K reward: the last bracketed number must equal the answer exactly.

One deliberate difference: a non-string answer (an ``int`` count, as a JSON dataset gives)
is compared as text. AReaL calls ``answer.strip()`` and raises ``AttributeError``.
"""

from __future__ import annotations

import re
from typing import Any

_BRACKETED_NUMBER = re.compile(r"\[([0-9\.]+)\]")


def extract_answer(pred_str: str, data_name: str, use_last_number: bool = True) -> str:
    """The number inside the last ``[...]`` that holds only digits and dots, else ``""``.

    ``data_name`` and ``use_last_number`` are accepted for AReaL's signature and unused there too.
    """
    found = _BRACKETED_NUMBER.findall(pred_str)
    return found[-1] if found else ""


def clevr_count_70k_reward_fn(
    prompt: Any, completions: Any, prompt_ids: Any, completion_ids: Any, answer: Any, **_: Any
) -> float:
    """1.0 when the completion's last ``[n]`` equals ``answer`` (whitespace stripped)."""
    if answer is None:
        return 0.0
    predicted = extract_answer(completions, data_name="")
    return float(predicted.strip() == str(answer).strip())
