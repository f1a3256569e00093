# SPDX-License-Identifier: Apache-2.0
"""How to call a Hugging Face causal LM's forward with a KV cache, across transformers versions.

Both the local engine (generation) and the trainer (logprobs over a shared prefix) pass a cache
to the model; the keyword lives here so neither imports the other's internals.
"""

from __future__ import annotations

import inspect
from typing import Any


def cache_keyword(model: Any) -> str:
    """``cache`` where the model's forward takes it (transformers >= 5.2x deprecates
    ``past_key_values`` with a FutureWarning on every call), else ``past_key_values``."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"
