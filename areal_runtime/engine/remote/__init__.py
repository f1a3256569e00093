# SPDX-License-Identifier: Apache-2.0
"""RemoteEngine: the agenerate contract over SGLang or vLLM servers, for scale-out."""

from areal_runtime.engine.remote.engine import RemoteEngine
from areal_runtime.errors import ServerUnreachableError

__all__ = ["RemoteEngine", "ServerUnreachableError"]
