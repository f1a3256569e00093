# SPDX-License-Identifier: Apache-2.0
"""Logprob parity: the trajectory's logprobs against the engine's record and against the model.

The trainer divides its recomputed logprobs by these (PPO's importance ratio), so a shifted,
missing or placeholder logprob silently corrupts every update. The engine record catches
workflow bugs without a model; a teacher-forced forward pass of the same model at the same
version catches engines and contexts that disagree with the trainer. Semantics follow
LocalEngine (SGLang's): logprobs of ``logits / temperature`` unless ``raw_logprobs``, and
temperature 1 for greedy requests.
"""

from __future__ import annotations

from typing import Any

from areal_runtime.consistency.alignment import Alignment, Span
from areal_runtime.consistency.problem import (
    LOGPROBS_ENGINE,
    LOGPROBS_MODEL,
    Problem,
    decode,
)
from areal_runtime.consistency.rows import TrajRow

DEFAULT_ATOL = 1e-3
_POSITION_FIX = (
    "put resp.output_logprobs at exactly the positions of resp.output_tokens "
    "([0.0] * len(prompt) + resp.output_logprobs)"
)


def _close(a: float, b: float, atol: float) -> bool:
    return abs(a - b) <= atol


def engine_problems(
    rows: list[TrajRow], alignment: Alignment, tokenizer: Any, episode: Any, atol: float
) -> list[Problem]:
    """Logprobs at each exactly placed completion equal the engine's ``output_logprobs``."""
    problems = []
    for span in alignment.spans:
        row = rows[span.row]
        if not span.exact or row.logprobs is None:
            continue
        found = row.logprobs[span.start : span.end]
        expected = span.call.output_logprobs
        bad = [
            i
            for i, (f, e) in enumerate(zip(found, expected, strict=True))
            if not _close(f, e, atol)
        ]
        if not bad:
            continue
        cause, fix = _logprob_cause(row.logprobs, span, atol)
        i = bad[0]
        token = decode(tokenizer, [row.tokens[span.start + i]])
        problems.append(
            Problem(
                episode,
                LOGPROBS_ENGINE,
                f"{len(bad)} of {len(found)} logprobs differ from the engine's (atol {atol:g})",
                cause=cause,
                fix=fix,
                row=span.row,
                position=span.start + i,
                expected=f"{expected[i]:.4f} for token {token}",
                found=f"{found[i]:.4f}",
            )
        )
    return problems


def _logprob_cause(logprobs: list[float], span: Span, atol: float) -> tuple[str, str]:
    expected = span.call.output_logprobs
    found = logprobs[span.start : span.end]
    if all(x == 0.0 for x in found):
        return "logprobs are placeholders (all 0.0)", "use resp.output_logprobs"
    for shift, where in ((-1, "one position before"), (1, "one position after")):
        pairs = [
            (logprobs[span.start + i + shift], e)
            for i, e in enumerate(expected)
            if 0 <= span.start + i + shift < len(logprobs)
        ]
        if pairs and all(_close(f, e, atol) for f, e in pairs):
            return f"logprobs shifted by one (each is stored {where} its token)", _POSITION_FIX
    return "logprobs differ from what the engine returned", "use resp.output_logprobs unchanged"


def model_problems(
    rows: list[TrajRow],
    alignment: Alignment,
    model: Any,
    tokenizer: Any,
    episode: Any,
    *,
    raw_logprobs: bool,
    model_version: int | None,
    atol: float,
    skip: set[tuple[int, int]],
) -> list[Problem]:
    """Teacher-forced logprobs of each row at trained completion positions, vs the trajectory."""
    problems = []
    for row in rows:
        if row.logprobs is None:
            continue
        spans = [s for s in alignment.spans_in(row.index) if (s.row, s.start) not in skip]
        positions = [
            (span, p)
            for span in spans
            for p in range(span.start, min(span.end, len(row.tokens)))
            if p > 0 and row.mask[p] and _same_version(span, p - span.start, model_version)
        ]
        if not positions:
            continue
        recomputed = teacher_forced(model, row.tokens, positions, raw_logprobs=raw_logprobs)
        bad = [
            (span, p, want)
            for (span, p), want in zip(positions, recomputed, strict=True)
            if not _close(row.logprobs[p], want, atol)
        ]
        if not bad:
            continue
        span, p, want = bad[0]
        worst = max(abs(row.logprobs[q] - w) for _, q, w in bad)
        if span.exact:
            cause = (
                "the engine's logprobs do not match the model at the same version"
                if _engine_matches(row, span, atol)
                else "the trajectory's logprobs are not the model's"
            )
            fix = (
                "compare the engine's logprob semantics with the trainer's (temperature-scaled "
                "vs raw_logprobs) and the weights version"
            )
        else:
            cause = "the trainer's context differs from the prompt the engine saw"
            fix = "train the exact sequence the engine saw: resp.input_tokens + resp.output_tokens"
        problems.append(
            Problem(
                episode,
                LOGPROBS_MODEL,
                f"{len(bad)} of {len(positions)} logprobs differ from a teacher-forced forward "
                f"pass (max |diff| {worst:.4f}, atol {atol:g})",
                cause=cause,
                fix=fix,
                row=row.index,
                position=p,
                expected=f"{want:.4f} for token {decode(tokenizer, [row.tokens[p]])}",
                found=f"{row.logprobs[p]:.4f}",
            )
        )
    return problems


def _same_version(span: Span, i: int, model_version: int | None) -> bool:
    """Only tokens sampled with the weights the model has now can be recomputed."""
    versions = span.call.output_versions
    return model_version is None or i >= len(versions) or versions[i] == model_version


def _engine_matches(row: TrajRow, span: Span, atol: float) -> bool:
    assert row.logprobs is not None
    found = row.logprobs[span.start : span.end]
    return all(_close(f, e, atol) for f, e in zip(found, span.call.output_logprobs, strict=True))


def teacher_forced(
    model: Any, tokens: list[int], positions: list[tuple[Span, int]], *, raw_logprobs: bool
) -> list[float]:
    """Logprob of ``tokens[p]`` given ``tokens[:p]`` under each span's sampling settings."""
    import torch

    with torch.inference_mode():
        device = next(model.parameters()).device
        ids = torch.tensor([tokens], device=device)
        logits = model(input_ids=ids).logits[0].float().cpu()
        out = []
        for span, p in positions:
            row = logits[p - 1].clone()
            call, i = span.call, p - span.start
            if call.frequency_penalty and i > 0:
                counts = torch.bincount(
                    torch.tensor(tokens[span.start : p]), minlength=row.shape[0]
                )
                row -= call.frequency_penalty * counts[: row.shape[0]]
            if i < call.min_new_tokens and call.stop_ids:
                row[[t for t in call.stop_ids if t < row.shape[0]]] = float("-inf")
            if not raw_logprobs and not call.is_greedy:
                row = row / call.temperature
            out.append(float(torch.log_softmax(row, dim=-1)[tokens[p]]))
    return out
