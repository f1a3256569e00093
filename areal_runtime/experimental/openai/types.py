# SPDX-License-Identifier: Apache-2.0
"""One recorded chat completion with its tokens, logprobs, versions and reward.

Training tensors are built from the tokens the engine produced, never by re-tokenizing text.
Unlike AReaL, ``to_tensor_dict`` is not cached, so a reward set after a first export is seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from areal_runtime.api.io_struct import ModelResponse

ChatTemplateType = Literal["hf", "concat"]


@dataclass
class InteractionWithTokenLogpReward:
    """A completion the proxy served: request messages, engine response, reward, parent."""

    interaction_id: str
    messages: list[dict[str, Any]]
    model_response: ModelResponse | None = None
    output_message: dict[str, Any] | None = None
    completion: dict[str, Any] | None = None
    reward: float | None = None
    parent: InteractionWithTokenLogpReward | None = field(default=None, repr=False)
    chat_template_type: ChatTemplateType = "hf"
    session_id: str | None = None

    @property
    def has_tensor_data(self) -> bool:
        return self.model_response is not None

    @property
    def is_complete(self) -> bool:
        return self.model_response is not None and self.output_message is not None

    def to_tensor_dict(self) -> dict[str, Any]:
        """``[1, L]`` tensors (int32 ids/masks/versions, float32 logprobs, bool attention)."""
        import torch

        ids, mask, logprobs, versions = self._sequences()
        return {
            "input_ids": torch.tensor([ids], dtype=torch.int32),
            "loss_mask": torch.tensor([mask], dtype=torch.int32),
            "logprobs": torch.tensor([logprobs], dtype=torch.float32),
            "versions": torch.tensor([versions], dtype=torch.int32),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.bool),
            "rewards": torch.tensor([self.reward or 0.0], dtype=torch.float32),
        }

    def _sequences(self) -> tuple[list[int], list[int], list[float], list[int]]:
        resp = self.model_response
        if resp is None:
            raise ValueError(f"interaction {self.interaction_id} has no engine response to export")
        prompt, out = list(resp.input_tokens), list(resp.output_tokens)
        if self.chat_template_type == "concat" and self.parent is not None:
            ids, mask, logprobs, versions = self.parent._sequences()
            if prompt[: len(ids)] != ids:
                raise ValueError(
                    f"interaction {self.interaction_id}: its prompt does not extend its parent's "
                    "tokens, so the concat export cannot join them"
                )
            extra = prompt[len(ids) :]
            return (
                ids + extra + out,
                mask + [0] * len(extra) + [1] * len(out),
                logprobs + [0.0] * len(extra) + list(resp.output_logprobs),
                versions + [-1] * len(extra) + list(resp.output_versions),
            )
        return (
            prompt + out,
            [0] * len(prompt) + [1] * len(out),
            [0.0] * len(prompt) + list(resp.output_logprobs),
            [-1] * len(prompt) + list(resp.output_versions),
        )
