# SPDX-License-Identifier: Apache-2.0
"""One engine answer as every API sees it: visible text, tool calls, why it stopped.

The three APIs (chat completions, Responses, Anthropic Messages) format the same
:class:`Generation` differently; the recorded tokens are the engine's, whatever the format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from areal_runtime.api.io_struct import ModelResponse
from areal_runtime.experimental.openai.proxy.tool_calls import parse_tool_calls

Finish = Literal["stop", "length", "tool_calls"]


@dataclass
class Generation:
    """An engine response decoded for an API answer."""

    interaction_id: str
    response: ModelResponse
    tokens: list[int]  # visible output tokens (trailing stop tokens removed)
    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    malformed_tool_calls: list[str] = field(default_factory=list)
    stop_sequence: str | None = None

    @property
    def finish(self) -> Finish:
        if self.tool_calls:
            return "tool_calls"
        return "length" if self.response.stop_reason == "length" else "stop"

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message in chat format: what later requests repeat as history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


def visible_tokens(resp: ModelResponse) -> list[int]:
    """Output tokens without the trailing stop run; an EOS-only output is an empty answer.

    ``output_tokens_without_stop`` raises on an EOS-only output (AReaL's semantics, kept); the
    proxy must still answer, where AReaL's returns HTTP 500 for a model that stops at once.
    """
    if not resp.output_tokens:
        return []
    try:
        return resp.output_tokens_without_stop
    except ValueError:
        if resp.end_with_stop:
            return []
        raise


def generation_of(
    interaction_id: str,
    resp: ModelResponse,
    tokenizer: Any,
    *,
    parse_tools: bool,
    stop: list[str] | None = None,
) -> Generation:
    tokens = visible_tokens(resp)
    # Stop tokens are already stripped; keep the rest so `<tool_call>` tags survive decoding.
    text = tokenizer.decode(tokens, skip_special_tokens=False)
    stop_sequence = next((s for s in stop or [] if text.endswith(s) or s in text), None)
    if not parse_tools:
        return Generation(interaction_id, resp, tokens, text, stop_sequence=stop_sequence)
    reply = parse_tool_calls(text)
    content = reply.content
    if content is None and not reply.calls:
        content = ""  # the model stopped at once: an empty answer, not a missing one
    return Generation(
        interaction_id,
        resp,
        tokens,
        content,
        reply.calls,
        reply.malformed,
        stop_sequence=stop_sequence,
    )
