# SPDX-License-Identifier: Apache-2.0
"""The test kit's view of the consistency checks (``areal_runtime.consistency``).

Re-exports the checks for workflow tests, plus ``ConsistencyChecker``, what the
``consistency_check`` pytest fixture hands a test.
"""

from areal_runtime.consistency import (
    EPISODE,
    LOGPROBS_ENGINE,
    LOGPROBS_MODEL,
    LOSS_MASK,
    PROMPT_PREFIX,
    TOKENS,
    TRAJECTORY,
    VERSIONS,
    ConsistencyReport,
    EpisodeCheck,
    Problem,
    acheck_workflow,
    check_trajectory,
    check_workflow,
)
from areal_runtime.testing.consistency.checker import ConsistencyChecker

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
