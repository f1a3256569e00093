# SPDX-License-Identifier: Apache-2.0
"""OpenAI's chat completions (``POST /v1/chat/completions``): the API the others translate into.

The body is already a :class:`ChatRequest` in all but name: its fields map onto
``GenerationHyperparameters``. The answer is a ``chat.completion`` with one choice per sample
(``n``), or the ``chat.completion.chunk`` stream that builds it, ending with ``data: [DONE]``.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response

from areal_runtime.experimental.openai.proxy.apis.adapter import ApiAdapter
from areal_runtime.experimental.openai.proxy.field_policy import (
    CACHE,
    EFFORT,
    ONE_MODEL,
    PARALLEL_TOOLS,
    SERVER_IGNORES,
    TEMPLATE_KWARGS,
    TOOL_CHOICE,
    TOP_LOGPROBS,
    TOTAL_TOKENS,
    ignored,
    is_set,
    refused,
    truthy,
    used,
)
from areal_runtime.experimental.openai.proxy.generation import Generation
from areal_runtime.experimental.openai.proxy.request import (
    CHAT_LENGTH_FIELDS,
    MODEL_NAME,
    ChatRequest,
    chat_request_of,
)
from areal_runtime.experimental.openai.proxy.sse import sse_response, text_pieces


def _not_text_format(value: Any) -> bool:
    return value not in (None, {}, {"type": "text"})


def _modalities_beyond_text(value: Any) -> bool:
    return value is not None and value != ["text"]


FIELDS = (
    used("messages"),
    used("n"),
    used("temperature"),
    used("top_p"),
    used("top_k"),
    used("max_tokens"),
    used("max_completion_tokens"),
    used("max_total_tokens", TOTAL_TOKENS),
    used("stop"),
    used("logprobs"),
    used("tools", "rendered by the chat template; calls parsed from the reply"),
    used("tool_choice", TOOL_CHOICE),
    used("chat_template_kwargs", TEMPLATE_KWARGS),
    used("frequency_penalty"),
    used("stream"),
    used("stream_options"),
    refused(
        "presence_penalty",
        "the engine does not apply it: the tokens would be sampled without the penalty",
        "non-zero",
        truthy,
    ),
    refused(
        "response_format",
        "the engine does not constrain decoding to a schema: the reply could break it",
        "anything but {type: text}",
        _not_text_format,
    ),
    TOP_LOGPROBS,
    refused(
        "logit_bias",
        "the engine does not bias logits: the tokens would be sampled without it",
        "non-empty",
        truthy,
    ),
    refused(
        "modalities",
        "the engine generates text only",
        "anything but ['text']",
        _modalities_beyond_text,
    ),
    refused("audio", "the engine generates text only", "set", is_set),
    refused("web_search_options", "a server-side search the proxy cannot run", "set", is_set),
    refused("functions", "the legacy function-calling format; send 'tools'", "non-empty", truthy),
    refused(
        "function_call", "the legacy function-calling format; send 'tool_choice'", "set", is_set
    ),
    ignored("model", ONE_MODEL),
    ignored("user", SERVER_IGNORES),
    ignored("metadata", SERVER_IGNORES),
    ignored("store", SERVER_IGNORES),
    ignored("service_tier", SERVER_IGNORES),
    ignored("safety_identifier", SERVER_IGNORES),
    ignored("prompt_cache_key", CACHE),
    ignored("prompt_cache_retention", CACHE),
    ignored("parallel_tool_calls", PARALLEL_TOOLS),
    ignored("seed", "the engine's own seed decides; the sampled tokens are recorded"),
    ignored("reasoning_effort", EFFORT),
    ignored("verbosity", EFFORT),
    ignored("prediction", "a latency hint; it never changes the reply"),
)


class ChatCompletions(ApiAdapter):
    name = "chat"
    routes = ("/v1/chat/completions", "/chat/completions")
    id_prefix = "chatcmpl-"
    fields = FIELDS
    counted_fields = (("messages", "max_messages"), ("stop", "max_stop"), ("tools", "max_tools"))
    length_fields = CHAT_LENGTH_FIELDS
    samples_field = "n"

    def translate(
        self, body: dict[str, Any], tokenizer: Any, history: list[dict[str, Any]] | None
    ) -> ChatRequest:
        return chat_request_of(body, tokenizer)

    def answer(
        self,
        answer_id: str,
        generations: list[Generation],
        request: ChatRequest,
        prompt_len: int,
        tokenizer: Any,
        body: dict[str, Any],
    ) -> dict[str, Any]:
        return chat_completion(
            answer_id, int(time.time()), generations, prompt_len, tokenizer, request.logprobs
        )

    def stream(self, answer: dict[str, Any], request: ChatRequest) -> Response:
        chunks = chat_chunks(answer, request.include_usage)
        return sse_response(((None, c) for c in chunks), done_marker=True)


CHAT = ChatCompletions()


def parse_chat_request(body: Any, tokenizer: Any) -> ChatRequest:
    """Validate an OpenAI chat-completion body; raises :class:`InvalidRequestError`."""
    return CHAT.parse(body, tokenizer)


def chat_completion(
    cid: str,
    created: int,
    generations: list[Generation],
    prompt_len: int,
    tokenizer: Any,
    want_logprobs: bool,
) -> dict[str, Any]:
    """The ``chat.completion`` object for the generations of one request."""
    completion_tokens = sum(g.response.output_len for g in generations)
    return {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": MODEL_NAME,
        "choices": [
            {
                "index": index,
                "message": g.message,
                "finish_reason": g.finish,
                "logprobs": _logprobs(g, tokenizer) if want_logprobs else None,
            }
            for index, g in enumerate(generations)
        ],
        "usage": {
            "prompt_tokens": prompt_len,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_len + completion_tokens,
        },
    }


def _logprobs(g: Generation, tokenizer: Any) -> dict[str, Any]:
    return {
        "content": [
            {
                "token": tokenizer.decode([tok]),
                "logprob": lp,
                "bytes": list(tokenizer.decode([tok]).encode()),
                "top_logprobs": [],
            }
            for tok, lp in zip(g.tokens, g.response.output_logprobs, strict=False)
        ]
    }


def chat_chunks(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events that stream ``completion``, choice by choice."""
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    chunks = []
    for choice in completion["choices"]:
        index, message = choice["index"], choice["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None, i: int = index) -> None:
            chunks.append(
                {**base, "choices": [{"index": i, "delta": delta, "finish_reason": finish}]}
            )

        chunk({"role": "assistant", "content": ""})
        for piece in text_pieces(message.get("content") or ""):
            chunk({"content": piece})
        for position, call in enumerate(message.get("tool_calls") or []):
            head = {"name": call["function"]["name"], "arguments": ""}
            chunk(
                {
                    "tool_calls": [
                        {"index": position, "id": call["id"], "type": "function", "function": head}
                    ]
                }
            )
            arguments = {"arguments": call["function"]["arguments"]}
            chunk({"tool_calls": [{"index": position, "function": arguments}]})
        chunk({}, choice["finish_reason"])
    if include_usage:
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks
