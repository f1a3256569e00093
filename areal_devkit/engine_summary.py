# SPDX-License-Identifier: Apache-2.0
"""The engine's line in a command's summary: how much prompt work the prefix cache saved.

A user who sees a second episode finish in a tenth of the first one's time should see why;
engines without a prefix cache (remote, scripted) add no line.
"""

from __future__ import annotations

from typing import Any


def prefix_cache_line(engine: Any) -> str | None:
    """``prefix cache: 79% of 12019 prompt tokens reused ...`` or None."""
    stats = getattr(engine, "prefix_cache_stats", None)
    if not callable(stats):
        return None
    snapshot = stats()
    if not snapshot.prompt_tokens:
        return None
    return snapshot.summary()
