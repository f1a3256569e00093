# SPDX-License-Identifier: Apache-2.0
"""One recorded completion with its tokens, logprobs, versions and reward (AReaL's fields).

Every field is optional, as in AReaL, so user code and AReaL's scaffolding build them the same
way: ``messages`` + ``output_message_list`` link a completion to its parent, ``completion`` (a
``ChatCompletion``) or ``response`` (a Responses API ``Response``) carry the answer and its id.
Training tensors are built from the tokens the engine produced, never by re-tokenizing text.
Unlike AReaL, ``to_tensor_dict`` is not cached, so a reward set after a first export is seen;
only an interaction rebuilt from an export (``_cache`` set, no ``model_response``) returns its
stored tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion
    from openai.types.responses.response import Response

    from areal_runtime.api.io_struct import ModelResponse

ChatTemplateType = Literal["hf", "concat"]


class ApiType(StrEnum):
    """Which OpenAI API produced an interaction."""

    COMPLETION = "completion"
    RESPONSE = "response"
    NONE = "none"


class InputName(StrEnum):
    """What an interaction's input is called in messages about it."""

    MESSAGES = "messages"
    INPUT_DATA = "input_data"
    NONE = "none"


@dataclass
class InteractionWithTokenLogpReward:
    """A completion the proxy served: request messages, engine response, reward, parent."""

    model_response: ModelResponse | None = None
    reward: float | None = None
    parent: InteractionWithTokenLogpReward | None = field(default=None, repr=False)
    chat_template_type: str = "hf"
    _cache: dict[str, Any] | None = field(default=None, repr=False)
    # The conversation the request carried and the assistant message(s) it got back: a later
    # request whose messages start with both is this one's child.
    messages: list[dict[str, Any]] = field(default_factory=list)
    output_message_list: list[dict[str, Any]] | None = None
    completion: ChatCompletion | None = None
    response: Response | None = None
    input_data: Any = ""
    _interaction_id: str | None = None
    # The runtime's own: the proxy session that recorded it (None outside the proxy).
    session_id: str | None = None

    @property
    def has_tensor_data(self) -> bool:
        return self.model_response is not None or self._cache is not None

    @property
    def is_completion(self) -> bool:
        return self.completion is not None

    @property
    def is_response(self) -> bool:
        return self.response is not None

    @property
    def api_type(self) -> ApiType:
        if self.is_completion:
            return ApiType.COMPLETION
        return ApiType.RESPONSE if self.is_response else ApiType.NONE

    @property
    def input_name_for_logging(self) -> InputName:
        if self.is_completion:
            return InputName.MESSAGES
        return InputName.INPUT_DATA if self.is_response else InputName.NONE

    @property
    def current_data(self) -> Any:
        """The request's input: its messages (chat) or its input (Responses API)."""
        if self.is_completion:
            return self.messages
        return self.input_data if self.is_response else None

    @property
    def parent_data(self) -> Any:
        return None if self.parent is None else self.parent.current_data

    @property
    def interaction_id(self) -> str | None:
        """The answer's id; an id given explicitly wins (the proxy's ``base/i`` samples)."""
        if self._interaction_id is not None:
            return self._interaction_id
        if self.completion is not None:
            return self.completion.id
        if self.response is not None:
            return self.response.id
        return None

    @interaction_id.setter
    def interaction_id(self, value: str | None) -> None:
        if self.is_completion or self.is_response:
            raise ValueError("Cannot set ID for completion or responses")
        self._interaction_id = value

    @property
    def created_at(self) -> float | None:
        if self.completion is not None:
            return float(self.completion.created)
        if self.response is not None:
            return float(self.response.created_at)
        return None

    @property
    def remaining_messages(self) -> list[dict[str, Any]]:
        """The messages this request added after its parent's conversation."""
        if self.parent is None:
            return self.messages
        if self.parent.output_message_list is None:
            raise ValueError("the parent interaction has no output message")
        return self.messages[len(self.parent.messages) + len(self.parent.output_message_list) :]

    def to_tensor_dict(self) -> dict[str, Any]:
        """``[1, L]`` tensors (int32 ids/masks/versions, float32 logprobs, bool attention)."""
        if self.model_response is None and self._cache is not None:
            return self._cache
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


def concat_string_interactions(
    interactions: dict[str, InteractionWithTokenLogpReward],
) -> dict[str, list[dict[str, Any]]]:
    """Interactions without tensors (an external model served them) as request/response text."""
    return {
        "interactions": [
            {
                "request": item.messages,
                "response": (
                    item.output_message_list[0].get("content") or ""
                    if item.output_message_list
                    else ""
                ),
                "reward": item.reward,
            }
            for item in interactions.values()
        ]
    }
