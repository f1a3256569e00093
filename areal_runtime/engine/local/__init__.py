# SPDX-License-Identifier: Apache-2.0
"""LocalEngine: a transformers model served with continuous batching on one worker thread."""

from areal_runtime.engine.local.engine import LocalEngine
from areal_runtime.errors import EngineDeadError

__all__ = ["EngineDeadError", "LocalEngine"]
