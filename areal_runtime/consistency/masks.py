# SPDX-License-Identifier: Apache-2.0
"""Loss-mask and version checks against where the sampled completions sit in each row.

Trained positions must be exactly the sampled ones: a prompt, feedback or tool-result token
with ``loss_mask`` 1 trains the model to predict text it never produced, and a sampled token
with 0 (often the EOS) is never reinforced. Versions on trained tokens must be the engine's
per-token stamps, or off-policy corrections use the wrong staleness.
"""

from __future__ import annotations

from typing import Any

from areal_runtime.consistency.alignment import Alignment
from areal_runtime.consistency.problem import (
    LOSS_MASK,
    VERSIONS,
    Problem,
    decode,
    snippet,
)
from areal_runtime.consistency.rows import TrajRow

_MASK_FIX = "loss_mask is 1 only on resp.output_tokens, 0 on everything the engine was given"


def mask_problems(
    rows: list[TrajRow], alignment: Alignment, tokenizer: Any, episode: Any
) -> list[Problem]:
    """Trained tokens outside every completion, and exactly placed completions not trained."""
    problems = []
    for row in rows:
        spans = alignment.spans_in(row.index)
        covered = {p for s in spans for p in range(s.start, s.end)}
        extra = [p for p in row.trained() if p not in covered]
        if extra:
            first = extra[0]
            run_end = first
            while run_end < len(row.tokens) and row.mask[run_end] and run_end not in covered:
                run_end += 1
            if not spans:
                cause = "this row trains tokens the engine never sampled in this episode"
            elif first < spans[0].start:
                cause = "prompt tokens in the loss mask"
            elif first >= spans[-1].end:
                cause = "tokens after the last completion are in the loss mask"
            else:
                cause = "feedback or tool-result tokens in the loss mask"
            problems.append(
                Problem(
                    episode,
                    LOSS_MASK,
                    f"{len(extra)} trained token(s) were not sampled by the engine",
                    cause=cause,
                    fix=_MASK_FIX,
                    row=row.index,
                    position=first,
                    expected="loss_mask 0 on " + decode(tokenizer, row.tokens[first:run_end]),
                    found="loss_mask 1",
                )
            )
        for span in spans:
            if not span.exact:
                continue
            untrained = [p for p in range(span.start, span.end) if not row.mask[p]]
            if not untrained:
                continue
            last = span.end - 1
            eos_only = untrained == [last] and row.tokens[last] in span.call.stop_ids
            problems.append(
                Problem(
                    episode,
                    LOSS_MASK,
                    f"{len(untrained)} sampled token(s) are not trained",
                    cause="the sampled EOS is not in the loss mask"
                    if eos_only
                    else "sampled tokens are masked out",
                    fix="loss_mask is 1 on every token of resp.output_tokens, EOS included",
                    row=row.index,
                    position=untrained[0],
                    expected="loss_mask 1 on " + snippet(tokenizer, row.tokens, untrained[0]),
                    found="loss_mask 0",
                )
            )
    return problems


def version_problems(rows: list[TrajRow], alignment: Alignment, episode: Any) -> list[Problem]:
    """Versions on each exactly placed completion equal the engine's ``output_versions``."""
    problems = []
    for span in alignment.spans:
        row = rows[span.row]
        if not span.exact or row.versions is None:
            continue
        found = row.versions[span.start : span.end]
        expected = span.call.output_versions
        bad = [i for i, (f, e) in enumerate(zip(found, expected, strict=True)) if f != e]
        if not bad:
            continue
        if set(found) == {-1}:
            cause = "versions are placeholders (-1) on trained tokens"
        elif len(set(found)) == 1 and set(expected) != set(found):
            cause = (
                f"versions are one value ({found[0]}), not the per-token versions the engine "
                "stamped (engine.get_version() read at the wrong time)"
            )
        else:
            cause = "versions differ from the engine's per-token stamps"
        problems.append(
            Problem(
                episode,
                VERSIONS,
                f"{len(bad)} trained token(s) carry versions the engine did not stamp",
                cause=cause,
                fix="use resp.output_versions at the completion positions",
                row=span.row,
                position=span.start + bad[0],
                expected=str(expected[bad[0] :][:8]),
                found=str(found[bad[0] :][:8]),
            )
        )
    return problems
