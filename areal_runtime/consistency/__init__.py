# SPDX-License-Identifier: Apache-2.0
"""Train-inference consistency checks: does a trajectory train on what the engine sampled?

``check_trajectory(traj, sampled, model, tokenizer)`` checks one episode against what a
``RecordingEngine`` saw the engine sample; ``check_workflow(workflow, rows, engine)`` runs a
workflow over rows and checks every trajectory, returning a ``ConsistencyReport``. Used by
``areal-devkit check``, by the trainer on its first batch and by the test kit's
``consistency_check`` fixture (``areal_runtime.testing.consistency`` re-exports this).
"""

from areal_runtime.consistency.check import check_trajectory
from areal_runtime.consistency.problem import (
    EPISODE,
    LOGPROBS_ENGINE,
    LOGPROBS_MODEL,
    LOSS_MASK,
    PROMPT_PREFIX,
    TOKENS,
    TRAJECTORY,
    VERSIONS,
    Problem,
)
from areal_runtime.consistency.runner import (
    ConsistencyReport,
    EpisodeCheck,
    acheck_workflow,
    check_workflow,
    parity_model,
)

__all__ = [
    "EPISODE",
    "LOGPROBS_ENGINE",
    "LOGPROBS_MODEL",
    "LOSS_MASK",
    "PROMPT_PREFIX",
    "TOKENS",
    "TRAJECTORY",
    "VERSIONS",
    "ConsistencyReport",
    "EpisodeCheck",
    "Problem",
    "acheck_workflow",
    "check_trajectory",
    "check_workflow",
    "parity_model",
]
