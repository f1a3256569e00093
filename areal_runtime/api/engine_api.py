# SPDX-License-Identifier: Apache-2.0
"""The inference-engine contract a workflow uses (AReaL's ``areal.api.engine_api``)."""

from __future__ import annotations

import abc

from areal_runtime.api.io_struct import ModelRequest, ModelResponse


class InferenceEngine(abc.ABC):
    """What a workflow may call: ``await engine.agenerate(req)`` and ``engine.get_version()``.

    Every engine honours AReaL's ``agenerate`` contract: it works on ``req.copy()``, requires
    ``gconfig.n_samples == 1``, caps the budget at
    ``min(max_tokens - len(input_ids), max_new_tokens)``, honours ``stop_token_ids`` and ``stop``
    strings, keeps the stop token in ``output_tokens`` and returns equal-length
    ``output_tokens``/``output_logprobs``/``output_versions``.
    """

    @abc.abstractmethod
    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        """Generate one completion for ``req``."""

    def get_version(self) -> int:
        """The policy version stamped on newly generated tokens."""
        return 0

    def set_version(self, version: int) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support set_version")
