# SPDX-License-Identifier: Apache-2.0
"""The test kit's view of the consistency checks (``areal_runtime.consistency``).

Re-exports the checks for workflow tests, plus ``ConsistencyChecker``, what the
``consistency_check`` pytest fixture hands a test.
"""

from areal_runtime import consistency as _checks
from areal_runtime.consistency import *  # noqa: F403  (the checks, under the test kit's path)
from areal_runtime.testing.consistency.checker import ConsistencyChecker

__all__ = [*_checks.__all__, "ConsistencyChecker"]
