# SPDX-License-Identifier: Apache-2.0
"""Train-inference consistency checks for rollout workflows (``areal-devkit check``).

``check_trajectory(traj, sampled, model, tokenizer)`` checks one episode against what a
``RecordingEngine`` saw the engine sample; ``check_workflow(workflow, rows, engine)`` runs a
workflow over rows and checks every trajectory, returning a ``ConsistencyReport``.
"""

from areal_runtime.testing.consistency.check import check_trajectory
from areal_runtime.testing.consistency.checker import ConsistencyChecker
from areal_runtime.testing.consistency.problem import (
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
from areal_runtime.testing.consistency.runner import (
    ConsistencyReport,
    EpisodeCheck,
    acheck_workflow,
    check_workflow,
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
    "ConsistencyChecker",
    "ConsistencyReport",
    "EpisodeCheck",
    "Problem",
    "acheck_workflow",
    "check_trajectory",
    "check_workflow",
]
