# SPDX-License-Identifier: Apache-2.0
"""Facts about one answer that AReaL's ``ModelResponse`` has no field for.

``ModelResponse`` keeps AReaL's fields exactly (the parity tests compare them), so an engine that
knows more, such as how many prompt tokens the local engine's prefix cache supplied, leaves it
on the response as a plain attribute; readers (``serve``'s request line) get None from any
other engine.
"""

from __future__ import annotations

from typing import Any

_CACHED_TOKENS = "_areal_prefix_cached_tokens"


def note_cached_tokens(response: Any, tokens: int) -> None:
    """Record that ``tokens`` of ``response``'s prompt were read from a prefix cache."""
    setattr(response, _CACHED_TOKENS, tokens)


def cached_tokens(response: Any) -> int | None:
    """Prompt tokens of ``response`` read from a prefix cache; None if its engine did not say."""
    value = getattr(response, _CACHED_TOKENS, None)
    return value if isinstance(value, int) else None
