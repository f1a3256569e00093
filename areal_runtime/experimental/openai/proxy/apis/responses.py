# SPDX-License-Identifier: Apache-2.0
"""OpenAI's Responses API (``POST /v1/responses``) on the proxy, as the Agents SDK calls it.

A request becomes a chat request: ``instructions`` a system message, ``input`` items messages
(``function_call`` items the assistant's tool calls, ``function_call_output`` items tool
messages), function tools the chat-format tools the chat template renders. The answer is a
``response`` object whose ``output`` holds a message and/or ``function_call`` items, or the
stream of events that builds it. ``previous_response_id`` continues from a response of the same
session. Anything the engine cannot honour is a 400 that names the field.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response

from areal_runtime.errors import InvalidRequestError
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
    MODEL_NAME,
    ChatRequest,
    chat_request_of,
    function_tool,
    requested_new_tokens,
)
from areal_runtime.experimental.openai.proxy.sse import sse_response, text_pieces


def _text_not_plain(value: Any) -> bool:
    if value in (None, {}):
        return False
    if not isinstance(value, dict) or set(value) - {"format", "verbosity"}:
        return True
    return value.get("format") not in (None, {"type": "text"})


FIELDS = (
    used("input", "messages and function_call / function_call_output items"),
    used("instructions", "the system message"),
    used("previous_response_id", "continues from a response of the same session"),
    used("max_output_tokens"),
    used("max_total_tokens", TOTAL_TOKENS),
    used("temperature"),
    used("top_p"),
    used("top_k"),
    used("frequency_penalty"),
    used("tools", "function tools, rendered by the chat template"),
    used("tool_choice", TOOL_CHOICE),
    used("stream"),
    used("chat_template_kwargs", TEMPLATE_KWARGS),
    refused(
        "text",
        "the engine does not constrain decoding to a schema: the reply could break it",
        "a format other than text",
        _text_not_plain,
    ),
    TOP_LOGPROBS,
    refused(
        "background",
        "background responses are polled later; the proxy answers in the request",
        "true",
        truthy,
    ),
    refused(
        "conversation",
        "server-side conversations the proxy does not store; send the input items",
        "set",
        is_set,
    ),
    refused("prompt", "a stored prompt template the proxy does not have", "set", is_set),
    ignored("model", ONE_MODEL),
    ignored("reasoning", EFFORT + "; the Agents SDK sends it by default"),
    ignored("include", "asks for extra output (encrypted reasoning...) the proxy has none of"),
    ignored("store", SERVER_IGNORES),
    ignored("metadata", SERVER_IGNORES),
    ignored("user", SERVER_IGNORES),
    ignored("service_tier", SERVER_IGNORES),
    ignored("safety_identifier", SERVER_IGNORES),
    ignored("prompt_cache_key", CACHE),
    ignored("prompt_cache_retention", CACHE),
    ignored("parallel_tool_calls", PARALLEL_TOOLS),
    ignored("max_tool_calls", "limits built-in tools, which the proxy has none of"),
    ignored("truncation", "the proxy never drops input: a prompt too long is a 400"),
    ignored("stream_options", "obfuscation padding only"),
)

_MESSAGE_ROLES = {
    "user": "user",
    "system": "system",
    "developer": "system",
    "assistant": "assistant",
}


@dataclass
class ResponsesRequest:
    chat: ChatRequest
    tools: list[dict[str, Any]]  # as given, echoed in the response
    tool_choice: Any
    instructions: str | None
    previous_response_id: str | None
    metadata: Any


class Responses(ApiAdapter):
    name = "responses"
    routes = ("/v1/responses", "/responses")
    id_prefix = "resp_"
    fields = FIELDS
    counted_fields = (("input", "max_messages"), ("tools", "max_tools"))
    length_fields = ("max_output_tokens",)

    def continues_from(self, body: Any) -> Any:
        return body.get("previous_response_id") if isinstance(body, dict) else None

    def sampling(self, request: ResponsesRequest) -> ChatRequest:
        return request.chat

    def translate(
        self, body: dict[str, Any], tokenizer: Any, history: list[dict[str, Any]] | None
    ) -> ResponsesRequest:
        return responses_request_of(body, tokenizer, history)

    def answer(
        self,
        answer_id: str,
        generations: list[Generation],
        request: ResponsesRequest,
        prompt_len: int,
        tokenizer: Any,
        body: dict[str, Any],
    ) -> dict[str, Any]:
        return response_object(answer_id, generations[0], request, prompt_len)

    def stream(self, answer: dict[str, Any], request: ResponsesRequest) -> Response:
        return sse_response(response_events(answer))


RESPONSES = Responses()


def parse_responses_request(
    body: Any, tokenizer: Any, history: list[dict[str, Any]] | None = None
) -> ResponsesRequest:
    """Validate a Responses body; ``history`` holds the messages of ``previous_response_id``."""
    return RESPONSES.parse(body, tokenizer, history)


def responses_request_of(
    body: dict[str, Any], tokenizer: Any, history: list[dict[str, Any]] | None
) -> ResponsesRequest:
    """A Responses body whose fields were checked, as a chat request plus what it echoes."""
    max_new_tokens = requested_new_tokens(body, Responses.length_fields)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidRequestError("'instructions' must be a string")
    messages = list(history or [])
    if instructions:
        messages = [m for m in messages if m.get("role") != "system"]
        messages.insert(0, {"role": "system", "content": instructions})
    messages += input_messages(body.get("input"), known_calls(messages))
    tools = body.get("tools") or []
    chat_tools = chat_tools_of(tools)
    tool_choice = body.get("tool_choice")
    chat_body = {
        "messages": messages,
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "tools": chat_tools or None,
        "tool_choice": "none" if tool_choice == "none" else None,
        "stream": body.get("stream") or False,
        "chat_template_kwargs": body.get("chat_template_kwargs"),
        "max_total_tokens": body.get("max_total_tokens"),
        "top_k": body.get("top_k"),
        "frequency_penalty": body.get("frequency_penalty"),
    }
    chat = chat_request_of(
        {k: v for k, v in chat_body.items() if v is not None},
        tokenizer,
        max_new_tokens=max_new_tokens,
    )
    return ResponsesRequest(
        chat=chat,
        tools=tools,
        tool_choice=tool_choice if tool_choice is not None else "auto",
        instructions=instructions,
        previous_response_id=body.get("previous_response_id"),
        metadata=body.get("metadata"),
    )


def known_calls(messages: list[dict[str, Any]]) -> set[str]:
    return {c.get("id") for m in messages for c in m.get("tool_calls") or []}


def chat_tools_of(tools: Any) -> list[dict[str, Any]]:
    """Responses function tools (``{type, name, parameters}``) in chat format."""
    if not isinstance(tools, list):
        raise InvalidRequestError("'tools' must be a list")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise InvalidRequestError(
                f"tools[{i}] has type {kind!r}; the proxy serves function tools only"
            )
        out.append(function_tool(tool, "parameters", f"tools[{i}]"))
    return out


def input_messages(items: Any, calls: set[str]) -> list[dict[str, Any]]:
    """Chat messages for ``input``: a string, or a list of message and tool items."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise InvalidRequestError("'input' must be a string or a non-empty list of items")
    messages: list[dict[str, Any]] = []
    calls = set(calls)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidRequestError(f"input[{i}] must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(_message(item, i))
        elif kind == "function_call":
            call = _function_call(item, i)
            calls.add(call["id"])
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or call_id not in calls:
                raise InvalidRequestError(
                    f"input[{i}].call_id {call_id!r} answers no function_call of this conversation"
                )
            output = item.get("output")
            if not isinstance(output, str):
                output = json.dumps(output)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        else:
            raise InvalidRequestError(
                f"input[{i}] has type {kind!r}; the proxy accepts message, function_call and "
                "function_call_output items"
            )
    return messages


def _message(item: dict[str, Any], i: int) -> dict[str, Any]:
    role = item.get("role")
    role = _MESSAGE_ROLES.get(role) if isinstance(role, str) else None
    if role is None:
        raise InvalidRequestError(
            f"input[{i}].role {item.get('role')!r} is not one of {sorted(_MESSAGE_ROLES)}"
        )
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise InvalidRequestError(f"input[{i}].content must be a string or a list of parts")
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text") and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            parts.append({"type": "image_url", "image_url": {"url": part["image_url"]}})
        else:
            raise InvalidRequestError(
                f"input[{i}].content[{j}] has type {kind!r}; the proxy serves input_text, "
                "output_text and input_image parts (an image by its image_url: a data URI or "
                "an address, not a file_id)"
            )
    if any(p["type"] == "image_url" for p in parts):
        return {"role": role, "content": parts}  # the chat request places the images
    return {"role": role, "content": "".join(p["text"] for p in parts)}


def _function_call(item: dict[str, Any], i: int) -> dict[str, Any]:
    name, call_id, arguments = item.get("name"), item.get("call_id"), item.get("arguments")
    if not isinstance(name, str) or not isinstance(call_id, str) or not isinstance(arguments, str):
        raise InvalidRequestError(
            f"input[{i}] (function_call) needs string call_id, name and arguments"
        )
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def output_items(g: Generation) -> list[dict[str, Any]]:
    """The response's ``output``: the text as a message, then one item per tool call."""
    items: list[dict[str, Any]] = []
    if g.content or not g.tool_calls:
        items.append(
            {
                "id": "msg_" + uuid.uuid4().hex[:29],
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": g.content or "", "annotations": []}],
            }
        )
    for call in g.tool_calls:
        items.append(
            {
                "id": "fc_" + uuid.uuid4().hex[:29],
                "type": "function_call",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    return items


def response_object(
    rid: str, g: Generation, req: ResponsesRequest, prompt_len: int
) -> dict[str, Any]:
    output_len = g.response.output_len
    truncated = g.response.stop_reason == "length" and not g.tool_calls
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "error": None,
        "model": MODEL_NAME,
        "instructions": req.instructions,
        "metadata": req.metadata,
        "output": output_items(g),
        "parallel_tool_calls": True,
        "previous_response_id": req.previous_response_id,
        "temperature": req.chat.gconfig.temperature,
        "top_p": req.chat.gconfig.top_p,
        "max_output_tokens": req.chat.gconfig.max_new_tokens,
        "tool_choice": req.tool_choice,
        "tools": req.tools,
        "text": {"format": {"type": "text"}},
        "usage": {
            "input_tokens": prompt_len,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_len,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt_len + output_len,
        },
    }


def response_events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The stream of events that builds ``response``, as OpenAI's server sends them."""
    events: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "content": []})  # fmt: skip
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index,
                 content_index=0, part=part)  # fmt: skip
            for piece in text_pieces(text):
                emit("response.output_text.delta", item_id=item["id"], output_index=index,
                     content_index=0, delta=piece, logprobs=[])  # fmt: skip
            emit("response.output_text.done", item_id=item["id"], output_index=index,
                 content_index=0, text=text, logprobs=[])  # fmt: skip
            emit("response.content_part.done", item_id=item["id"], output_index=index,
                 content_index=0, part={**part, "text": text})  # fmt: skip
        else:
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "arguments": ""})  # fmt: skip
            emit("response.function_call_arguments.delta", item_id=item["id"],
                 output_index=index, delta=item["arguments"])  # fmt: skip
            emit("response.function_call_arguments.done", item_id=item["id"],
                 output_index=index, arguments=item["arguments"], name=item["name"])  # fmt: skip
        emit("response.output_item.done", output_index=index, item=item)
    final = "response.completed" if response["status"] == "completed" else "response.incomplete"
    emit(final, response=response)
    return events
