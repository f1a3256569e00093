# SPDX-License-Identifier: Apache-2.0
"""Find each sampled completion in the trajectory rows, and explain the ones that are not there.

The invariant: every completion the engine sampled appears in some row exactly as sampled, right
after exactly the prompt the engine saw (``row[:len(input)] == input``). That one rule covers
single-turn, multi-turn-in-one-row (each turn's prompt must then extend the last) and
one-row-per-turn exports. Completions that break it are diagnosed: re-tokenized text, a lost
EOS, a re-rendered history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from areal_runtime.consistency.problem import (
    PROMPT_PREFIX,
    TOKENS,
    Problem,
    common_prefix,
    decode,
    snippet,
)
from areal_runtime.consistency.rows import TrajRow
from areal_runtime.engine.recording import SampledCall


@dataclass
class Span:
    """Where a sampled completion sits in a row; ``exact`` when tokens and context match."""

    call: SampledCall
    row: int
    start: int
    length: int
    exact: bool

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass
class Alignment:
    spans: list[Span] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def spans_in(self, row: int) -> list[Span]:
        return sorted((s for s in self.spans if s.row == row), key=lambda s: s.start)


def align(
    rows: list[TrajRow],
    calls: list[SampledCall],
    tokenizer: Any,
    episode: Any,
    *,
    allow_untrained: bool = False,
) -> Alignment:
    """Place every call in ``rows``; problems for calls that are missing or differ."""
    result = Alignment()
    taken: set[tuple[int, int]] = set()
    placed: dict[int, Span] = {}
    # Trained placements first: with one row per turn, a turn's completion also sits, exactly,
    # in the next turn's row as re-rendered history (a tool call), where it is prompt.
    for trained_only in (True, False):
        for row in rows:
            for k, call in enumerate(calls):
                seq = call.input_tokens + call.output_tokens
                start = len(call.input_tokens)
                if k in placed or not call.output_tokens or (row.index, start) in taken:
                    continue
                if trained_only and not (start < len(row.mask) and row.mask[start]):
                    continue
                if row.tokens[: len(seq)] == seq:
                    span = Span(call, row.index, start, len(call.output_tokens), exact=True)
                    placed[k] = span
                    taken.add((row.index, start))
                    result.spans.append(span)
    explained = _history_problems(calls, placed, result, tokenizer, episode)
    for k, call in enumerate(calls):
        if k in placed or not call.output_tokens:
            continue
        span, problem = _diagnose(call, k, rows, taken, result, tokenizer, episode)
        if span is not None:
            taken.add((span.row, span.start))
            result.spans.append(span)
        if problem is None and span is None and not allow_untrained:
            problem = Problem(
                episode,
                TOKENS,
                f"turn {k + 1}: the engine sampled {len(call.output_tokens)} tokens that no "
                "trajectory row contains",
                cause="a sampled completion is missing from the trajectory",
                fix="train every completion the engine sampled (or export it as its own row)",
                expected=decode(tokenizer, call.output_tokens),
                found="(nothing)",
            )
        if problem is not None and k not in explained:
            result.problems.append(problem)
    return result


def _history_problems(
    calls: list[SampledCall],
    placed: dict[int, Span],
    result: Alignment,
    tokenizer: Any,
    episode: Any,
) -> set[int]:
    """A later turn whose prompt does not start with an earlier turn's prompt + completion.

    Only reported when the turns are not exported as separate, exactly matching rows, which is
    the one layout where a prompt that does not extend the history still trains correctly.
    """
    explained: set[int] = set()
    for k, call in enumerate(calls):
        best, best_len = None, -1
        for j in range(k):
            prev = calls[j]
            if len(call.input_tokens) <= len(prev.input_tokens):
                continue  # a sibling (group member, n > 1), not an earlier turn
            history = prev.input_tokens + prev.output_tokens
            shared = common_prefix(call.input_tokens, history)
            if shared == len(history):
                best = None
                break  # some earlier turn is extended exactly
            if shared >= max(1, len(prev.input_tokens) // 2) and shared > best_len:
                best, best_len = j, shared
        if best is None:
            continue
        if best in placed and k in placed and placed[best].row != placed[k].row:
            continue  # separate rows per turn: each trains what the engine saw
        prev = calls[best]
        history = prev.input_tokens + prev.output_tokens
        explained.update((best, k))
        result.problems.append(
            Problem(
                episode,
                PROMPT_PREFIX,
                f"turn {k + 1}'s prompt does not extend turn {best + 1} "
                f"(first difference at position {best_len} of turn {k + 1}'s prompt)",
                cause=f"turn {k + 1}'s prompt does not extend turn {best + 1}, so the trainer "
                "sees a history the model never produced",
                fix="build the next prompt from the previous input_ids + output_tokens, "
                "not from re-rendered text",
                row=placed[k].row if k in placed else None,
                position=best_len,
                expected=snippet(tokenizer, history, best_len),
                found=snippet(tokenizer, call.input_tokens, best_len),
            )
        )
    return explained


def _diagnose(
    call: SampledCall,
    k: int,
    rows: list[TrajRow],
    taken: set[tuple[int, int]],
    result: Alignment,
    tokenizer: Any,
    episode: Any,
) -> tuple[Span | None, Problem | None]:
    """Where a call that is not in any row exactly went wrong: its tokens or its context."""
    inp, out = call.input_tokens, call.output_tokens
    start = len(inp)
    for row in rows:
        if (row.index, start) in taken or len(row.tokens) <= start or row.tokens[:start] != inp:
            continue
        end = start
        if row.mask[start]:
            while end < len(row.tokens) and row.mask[end]:
                end += 1
        else:
            end = min(len(row.tokens), start + len(out))
        found = row.tokens[start:end]
        at = common_prefix(found, out)
        cause, fix = _token_cause(found, call, tokenizer, row_ends=end == len(row.tokens))
        span = Span(call, row.index, start, len(found), exact=False)
        return span, Problem(
            episode,
            TOKENS,
            f"turn {k + 1}: the trained tokens are not the {len(out)} tokens the engine sampled",
            cause=cause,
            fix=fix,
            row=row.index,
            position=start + at,
            expected=snippet(tokenizer, out, at),
            found=snippet(tokenizer, found, at),
        )
    for row in rows:
        at = _find(row, out, taken)
        if at is None:
            continue
        context = row.tokens[:at]
        diverge = common_prefix(context, inp)
        earlier = [s for s in result.spans if s.row == row.index and s.start < at]
        if earlier:
            cause = f"turn {k + 1}'s prompt does not extend turn {k}"
            fix = "build the next prompt from the previous input_ids + output_tokens, not from re-rendered text"
        else:
            cause = "the context before the completion is not the prompt the engine saw"
            fix = "build input_ids from resp.input_tokens + resp.output_tokens"
        span = Span(call, row.index, at, len(out), exact=False)
        return span, Problem(
            episode,
            PROMPT_PREFIX,
            f"turn {k + 1}: the completion is trained after a context that differs from the "
            "prompt the engine saw",
            cause=cause,
            fix=fix,
            row=row.index,
            position=diverge,
            expected=snippet(tokenizer, inp, diverge),
            found=snippet(tokenizer, context, diverge),
        )
    return None, None


def _find(row: TrajRow, out: list[int], taken: set[tuple[int, int]]) -> int | None:
    """The last position where ``out`` occurs in the row, preferring trained positions."""
    hits = [
        p
        for p in range(len(row.tokens) - len(out), -1, -1)
        if row.tokens[p : p + len(out)] == out and (row.index, p) not in taken
    ]
    trained = [p for p in hits if row.mask[p]]
    return (trained or hits or [None])[0]


_CUT_SHORT = (
    "the completion is cut short in the trajectory",
    "append all of resp.output_tokens with loss_mask 1; to bound an episode's length, stop "
    "generating at the limit (max_new_tokens) rather than slicing the trajectory",
)


def _token_cause(
    found: list[int], call: SampledCall, tokenizer: Any, *, row_ends: bool
) -> tuple[str, str]:
    """Name the likeliest cause. A row that ends inside the completion was cut (a length limit
    slicing the trajectory), even when the tokens it lost decode to nothing (special tokens)."""
    out = call.output_tokens
    eos_lost = bool(out) and out[-1] in call.stop_ids and (not found or found[-1] != out[-1])
    prefix = len(found) < len(out) and found == out[: len(found)]
    truncated = row_ends and prefix
    if truncated and not (eos_lost and len(found) == len(out) - 1):
        return _CUT_SHORT
    if tokenizer is not None and found:
        text = tokenizer.decode(found, skip_special_tokens=True).strip()
        if text == tokenizer.decode(out, skip_special_tokens=True).strip():
            lost = " (the sampled EOS was lost)" if eos_lost else ""
            cut = ", or cut at a length limit just before its EOS" if truncated else ""
            return (
                f"completion re-tokenized from text{cut}{lost}",
                "use resp.output_tokens (EOS included), never tokenizer.encode(decoded text)",
            )
    if found == out[:-1] and eos_lost:
        return (
            "the sampled EOS is missing from the trained tokens",
            "train resp.output_tokens, not resp.output_tokens_without_stop",
        )
    if prefix:
        return _CUT_SHORT
    return (
        "the trained tokens differ from what the engine sampled",
        "build the completion from resp.output_tokens unchanged",
    )
