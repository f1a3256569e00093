# SPDX-License-Identifier: Apache-2.0
"""What a consistency check reports: one ``Problem`` per defect, readable without the code.

A problem says where (episode, row, first bad position), what (expected vs found, decoded), and
why with a fix, because the person reading it is debugging a workflow, not this checker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The checks, as named in reports and asserted by tests.
TRAJECTORY = "trajectory"  # the trajectory dict itself: keys, shapes
EPISODE = "episode"  # the episode raised or was rejected, so nothing could be checked
TOKENS = "tokens"  # trained tokens are exactly the sampled tokens, EOS included
LOSS_MASK = "loss-mask"  # only sampled tokens are trained, all of them
PROMPT_PREFIX = "prompt-prefix"  # a completion's context is the prompt the engine saw
LOGPROBS_ENGINE = "logprobs-engine"  # logprobs equal the engine's
LOGPROBS_MODEL = "logprobs-model"  # logprobs equal a teacher-forced forward pass
VERSIONS = "versions"  # versions equal the engine's stamps

SNIPPET_TOKENS = 8


@dataclass(frozen=True)
class Problem:
    """One failed check on one trajectory row (``row``/``position`` are None when not local)."""

    episode: Any
    check: str
    message: str
    cause: str
    fix: str
    row: int | None = None
    position: int | None = None
    expected: str = ""
    found: str = ""

    def format(self, *, label: str | None = None) -> str:
        """The problem as text; ``label`` names the episodes when one text stands for several."""
        where = label or f"episode {self.episode}"
        if self.row is not None:
            where += f" row {self.row}"
        if self.position is not None:
            where += f" position {self.position}"
        lines = [f"{where}  [{self.check}] {self.message}"]
        if self.expected or self.found:
            lines.append(f"    expected: {self.expected}")
            lines.append(f"    found:    {self.found}")
        if self.check == EPISODE:  # an error: what was raised, where, then what to do
            lines.append(f"    error: {self.cause}")
            lines.append(f"    fix:   {self.fix}")
        else:
            lines.append(f"    likely cause: {self.cause}: {self.fix}")
        return "\n".join(lines)


def decode(tokenizer: Any, tokens: list[int]) -> str:
    """``repr`` of the text with special tokens kept (the EOS must show), or the ids."""
    if tokenizer is None:
        return repr(list(tokens))
    return repr(tokenizer.decode(list(tokens), skip_special_tokens=False))


def snippet(tokenizer: Any, tokens: list[int], start: int, count: int = SNIPPET_TOKENS) -> str:
    """A few decoded tokens from ``start``; ``(nothing)`` past the end."""
    part = list(tokens[start : start + count])
    if not part:
        return "(nothing)"
    more = " ..." if len(tokens) > start + count else ""
    return decode(tokenizer, part) + more


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
