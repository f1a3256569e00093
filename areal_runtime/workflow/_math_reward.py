# SPDX-License-Identifier: Apache-2.0
"""The reward AReaL's agent workflows share: does the completion state the gold answer?

One definition, re-exported by each agent module as ``math_reward_fn`` (AReaL repeats it in
every module). A module-level function, so the process-mode reward pool can pickle it.
"""

from __future__ import annotations

from math_verify import parse, verify


def math_reward_fn(completions: str, answer: str) -> float:
    """1.0 when ``math_verify`` finds the gold ``answer`` in ``completions``, else 0.0."""
    # math_verify's verify is not symmetric: AReaL passes (prediction, gold), and so do we.
    return float(verify(parse(completions), parse(answer)))
