# SPDX-License-Identifier: Apache-2.0
"""Request and response types of ``InferenceEngine.agenerate`` (AReaL's ``areal.api.io_struct``).

No torch, PIL or numpy import here: workflows import this module at start-up.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from areal_runtime.api.cli_args import GenerationHyperparameters, stop_ids_of

StopReason = Literal["length", "stop", "tool_calls", "abort"]


@dataclass
class ModelRequest:
    """One generation request: a prompt as token ids plus sampling settings."""

    rid: str = field(default_factory=lambda: str(uuid.uuid4()))
    input_ids: list[int] = field(default_factory=list)
    gconfig: GenerationHyperparameters = field(default_factory=GenerationHyperparameters)
    metadata: dict[str, Any] = field(default_factory=dict)
    tokenizer: Any = None
    image_data: list[str] | None = field(default_factory=list)
    processor: Any = None
    vision_msg_vllm: list | None = None

    def copy(self) -> ModelRequest:
        """A copy whose lists, metadata and gconfig can be changed without touching ``self``.

        The tokenizer and processor are shared, as in AReaL.
        """
        return ModelRequest(
            rid=self.rid,
            input_ids=list(self.input_ids),
            gconfig=self.gconfig.new(),
            metadata=dict(self.metadata),
            tokenizer=self.tokenizer,
            image_data=list(self.image_data) if self.image_data is not None else None,
            processor=self.processor,
            vision_msg_vllm=list(self.vision_msg_vllm)
            if self.vision_msg_vllm is not None
            else None,
        )


@dataclass
class ModelResponse:
    """The engine's answer: prompt and output tokens with per-token logprobs and versions."""

    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    output_logprobs: list[float] = field(default_factory=list)
    output_versions: list[int] = field(default_factory=list)
    stop_reason: StopReason = "stop"
    tokenizer: Any = None
    input_images: list[Any] = field(default_factory=list)
    processor: Any = None
    latency: float = float("inf")
    ttft: float = float("inf")
    itl: list[float] = field(default_factory=list)
    routed_experts: Any = None

    @property
    def input_len(self) -> int:
        return len(self.input_tokens)

    @property
    def output_len(self) -> int:
        return len(self.output_tokens)

    def _stop_ids(self) -> set[int]:
        if self.tokenizer is None:
            raise ValueError(
                "ModelResponse.tokenizer is None: pass tokenizer=... in the ModelRequest so the "
                "engine can tell which output tokens are eos/pad"
            )
        return set(stop_ids_of(self.tokenizer))

    @property
    def end_with_stop(self) -> bool:
        """Whether the last output token is an eos or pad id (any of several eos ids)."""
        stop_ids = self._stop_ids()
        return bool(self.output_tokens) and self.output_tokens[-1] in stop_ids

    @property
    def output_tokens_without_stop(self) -> list[int]:
        """Output tokens with the trailing run of eos/pad ids removed.

        Unchanged for ``length``/``abort``, and for a ``stop`` that came from a stop string or a
        custom stop id (AReaL raises there, which made its proxy answer HTTP 500). Raises
        ``ValueError`` when every output token is eos/pad, as AReaL does.
        """
        stop_ids = self._stop_ids()
        if self.stop_reason in ("length", "abort") or not self.output_tokens:
            return list(self.output_tokens)
        end = len(self.output_tokens)
        while end > 0 and self.output_tokens[end - 1] in stop_ids:
            end -= 1
        if end == 0:
            raise ValueError(
                "All output_tokens are EOS or PAD tokens; cannot strip stop tokens without "
                "removing the entire output"
            )
        return self.output_tokens[:end]


@dataclass
class FinetuneSpec:
    """A run's length: epochs over a dataset in batches (AReaL's ``FinetuneSpec``).

    ``steps_per_epoch`` is at least 1 (a dataset smaller than one batch still trains a step per
    epoch, as the trainer does); AReaL's would be 0 there. A ``total_train_steps`` cap from the
    config is applied by the trainer, not here, as in AReaL.
    """

    total_train_epochs: int
    dataset_size: int
    train_batch_size: int

    @property
    def steps_per_epoch(self) -> int:
        return max(1, self.dataset_size // self.train_batch_size)

    @property
    def total_train_steps(self) -> int:
        return self.total_train_epochs * self.steps_per_epoch


@dataclass
class StepInfo:
    """Where a run stands, all 0-based (AReaL's ``StepInfo``)."""

    epoch: int
    epoch_step: int
    global_step: int
    steps_per_epoch: int

    def next(self) -> StepInfo:
        """The step after this one (the first step of the next epoch after an epoch's last)."""
        last = self.epoch_step == self.steps_per_epoch - 1
        return StepInfo(
            epoch=self.epoch + int(last),
            epoch_step=0 if last else self.epoch_step + 1,
            global_step=self.global_step + 1,
            steps_per_epoch=self.steps_per_epoch,
        )


@dataclass
class SaveLoadMeta:
    """What ``save(meta)`` / ``load(meta)`` of a train engine writes or reads, and where."""

    path: str
    weight_format: str
    with_optim: bool
    tokenizer: Any = None
    processor: Any = None
    base_model_path: str | None = None
    naive_distributed: bool = False


@dataclass
class RolloutStat:
    """Rollout counts of a staleness manager: waiting, running, and how they ended."""

    accepted: int = 0
    enqueued: int = 0
    rejected: int = 0
    running: int = 0
