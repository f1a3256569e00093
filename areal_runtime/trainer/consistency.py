# SPDX-License-Identifier: Apache-2.0
"""Before the first update: ``areal-devkit check``'s checks on the first training batch.

A workflow that re-tokenizes its completion, drops the stop token, shifts the loss mask by one
or copies logprobs from the wrong turn produces trajectories that *look* fine and silently
train the wrong thing. The trainer records what the engine sampled (a ``RecordingEngine``) and,
before the first update, runs the same checks as ``areal-devkit check`` on the first batch,
logprob parity with the model included: the batch was sampled at version 0 and no weights have
moved yet. A failing report stops training unless ``allow_mismatch`` is set.
"""

from __future__ import annotations

import time
from typing import Any

from areal_runtime.consistency import (
    ConsistencyReport,
    EpisodeCheck,
    check_trajectory,
    parity_model,
)
from areal_runtime.engine.recording import RecordingEngine


def check_first_batch(
    batch: list[tuple[int, dict[str, Any]]], recorder: RecordingEngine, tokenizer: Any = None
) -> ConsistencyReport:
    """Check every ``(task_id, trajectory)`` of ``batch`` against what ``recorder`` saw.

    A group's members may be dropped by the workflow (``None``), so sampled completions that no
    row trains are allowed here; every trained token must still be exactly what was sampled.
    """
    start = time.perf_counter()
    engine = recorder.engine
    model, raw_logprobs, note = parity_model(engine)
    version = engine.get_version()
    tokenizer = tokenizer if tokenizer is not None else getattr(engine, "tokenizer", None)
    checks = [
        EpisodeCheck(
            task_id,
            check_trajectory(
                traj,
                recorder.calls(task_id),
                model,
                tokenizer,
                episode=task_id,
                raw_logprobs=raw_logprobs,
                model_version=version,
                allow_untrained=True,
            ),
        )
        for task_id, traj in batch
    ]
    mode = "on (first batch, version 0)" if model is not None else None
    return ConsistencyReport(checks, mode, note, time.perf_counter() - start)
