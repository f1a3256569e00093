# SPDX-License-Identifier: Apache-2.0
"""``RecordingEngine``: any engine, plus a per-episode record of what it sampled.

Train-inference consistency checks need ground truth that a workflow cannot corrupt: the tokens,
logprobs and versions the engine returned, and the sampling settings needed to recompute the
logprobs. Wrapping the engine records that for every engine at once (local, scripted, remote),
keyed by the episode's ``workflow_context`` task id, which the executor sets per episode and
which agents' proxy calls inherit.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.engine._contract import stop_ids_for


@dataclass(frozen=True)
class SampledCall:
    """One ``agenerate`` answer as the engine produced it, with its sampling settings."""

    episode: Any
    order: int
    input_tokens: list[int]
    output_tokens: list[int]
    output_logprobs: list[float]
    output_versions: list[int]
    stop_reason: str
    temperature: float
    greedy: bool
    frequency_penalty: float = 0.0
    min_new_tokens: int = 0
    stop_ids: tuple[int, ...] = ()

    @property
    def is_greedy(self) -> bool:
        """Greedy rows sample argmax and report logprobs at temperature 1 (LocalEngine, SGLang)."""
        return self.greedy or self.temperature == 0.0


class RecordingEngine(InferenceEngine):
    """Delegates everything to ``engine``; records each ``agenerate`` response per episode."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._calls: dict[Any, list[SampledCall]] = defaultdict(list)
        self._order = itertools.count()
        self.recording = True

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this wrapper lacks: tokenizer, model, close, ...
        if name == "engine":
            raise AttributeError(name)
        return getattr(self.engine, name)

    def get_version(self) -> int:
        return self.engine.get_version()

    def set_version(self, version: int) -> None:
        self.engine.set_version(version)

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        episode = workflow_context.get().task_id
        order = next(self._order)  # request order, not completion order
        g = req.gconfig
        resp = await self.engine.agenerate(req)
        if not self.recording:
            return resp
        self._calls[episode].append(
            SampledCall(
                episode=episode,
                order=order,
                input_tokens=list(resp.input_tokens),
                output_tokens=list(resp.output_tokens),
                output_logprobs=[float(x) for x in resp.output_logprobs],
                output_versions=[int(v) for v in resp.output_versions],
                stop_reason=str(resp.stop_reason),
                temperature=float(g.temperature),
                greedy=bool(g.greedy),
                frequency_penalty=float(g.frequency_penalty),
                min_new_tokens=int(g.min_new_tokens),
                stop_ids=tuple(self._stop_ids(req)),
            )
        )
        return resp

    def _stop_ids(self, req: ModelRequest) -> list[int]:
        """The ids that end generation, by the engines' own rule (``stop_ids_for``)."""
        tokenizer = req.tokenizer if req.tokenizer is not None else self._tokenizer()
        return sorted(stop_ids_for(req, tokenizer))

    def _tokenizer(self) -> Any:
        return getattr(self.engine, "tokenizer", None)

    def calls(self, episode: Any) -> list[SampledCall]:
        """The calls made during ``episode`` (a task id), in request order."""
        return sorted(self._calls.get(episode, []), key=lambda c: c.order)

    def episodes(self) -> list[Any]:
        return list(self._calls)

    def clear(self) -> None:
        self._calls.clear()

    def stop_recording(self) -> None:
        """Record nothing more and drop what was recorded (a trainer checks one batch only)."""
        self.recording = False
        self._calls.clear()
