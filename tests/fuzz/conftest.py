# SPDX-License-Identifier: Apache-2.0
"""Hypothesis profiles for the hostile-input suite.

``ci`` (the default) is derandomized with fixed example counts so `make test` stays fast and
never flakes; ``fuzz`` (``AREAL_FUZZ_PROFILE=fuzz``, what `make fuzz` selects) draws many more
random examples. No deadlines: a slow example on a loaded machine is not a bug.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("fuzz", derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("AREAL_FUZZ_PROFILE", "ci"))
