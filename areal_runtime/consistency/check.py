# SPDX-License-Identifier: Apache-2.0
"""``check_trajectory``: every train-inference consistency check on one episode's trajectory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from areal_runtime.consistency.alignment import align
from areal_runtime.consistency.logprobs import (
    DEFAULT_ATOL,
    engine_problems,
    model_problems,
)
from areal_runtime.consistency.masks import mask_problems, version_problems
from areal_runtime.consistency.problem import Problem
from areal_runtime.consistency.rows import split_rows
from areal_runtime.engine.recording import SampledCall


def check_trajectory(
    traj: Any,
    sampled: Sequence[SampledCall],
    model: Any = None,
    tokenizer: Any = None,
    *,
    episode: Any = None,
    raw_logprobs: bool = False,
    model_version: int | None = None,
    atol: float = DEFAULT_ATOL,
    allow_untrained: bool = False,
) -> list[Problem]:
    """Problems with ``traj`` given what the engine ``sampled`` during its episode.

    ``sampled`` comes from ``RecordingEngine.calls(task_id)``. With ``model`` (the engine's, at
    ``model_version``) the logprobs are also recomputed by a teacher-forced forward pass;
    ``raw_logprobs`` must match the engine's setting. ``allow_untrained`` accepts sampled
    completions that no row trains (a workflow that filters samples on purpose).
    """
    calls = list(sampled)
    if episode is None and calls:
        episode = calls[0].episode
    rows, problems = split_rows(traj, episode)
    if not rows:
        return problems
    alignment = align(rows, calls, tokenizer, episode, allow_untrained=allow_untrained)
    problems += alignment.problems
    problems += mask_problems(rows, alignment, tokenizer, episode)
    problems += version_problems(rows, alignment, episode)
    engine = engine_problems(rows, alignment, tokenizer, episode, atol)
    problems += engine
    if model is not None:
        skip = {
            (s.row, s.start)
            for s in alignment.spans
            if rows[s.row].tokens[s.start : s.end] != s.call.output_tokens
            or any(p.row == s.row and s.start <= (p.position or -1) < s.end for p in engine)
        }
        problems += model_problems(
            rows,
            alignment,
            model,
            tokenizer,
            episode,
            raw_logprobs=raw_logprobs,
            model_version=model_version,
            atol=atol,
            skip=skip,
        )
    return problems
