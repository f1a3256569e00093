# SPDX-License-Identifier: Apache-2.0
"""Anthropic's Messages API (``POST /v1/messages``) on the proxy, as the Anthropic SDK calls it.

``system`` becomes a system message, and so does a ``system`` turn inside ``messages`` where
it stands (Claude Code sends its environment that way); ``text`` blocks text, ``tool_use``
blocks the assistant's tool calls and ``tool_result`` blocks tool messages; tools (``name``,
``input_schema``) the chat-format tools the chat template renders. The answer is a ``message`` with ``text`` and
``tool_use`` blocks and a ``stop_reason``, or the stream of events that builds it. Rewards use
the message id, like any completion id.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from areal_runtime.errors import InvalidRequestError
from areal_runtime.experimental.openai.proxy.apis.adapter import ERROR_TYPES, ApiAdapter
from areal_runtime.experimental.openai.proxy.field_policy import (
    CACHE,
    ONE_MODEL,
    SERVER_IGNORES,
    TEMPLATE_KWARGS,
    TOOL_CHOICE,
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
    check_stop_strings,
    function_tool,
    requested_new_tokens,
)
from areal_runtime.experimental.openai.proxy.sse import sse_response, text_pieces

_THINKING = (
    "the model thinks if its chat template makes it; what it samples, thinking included, is "
    "what the client gets and what is recorded"
)
_KEEPS_CONTEXT_EDITS = {"clear_thinking_20251015"}


def _output_config_constrains(value: Any) -> bool:
    if value is None:
        return False
    return not isinstance(value, dict) or value.get("format") is not None


def _context_edits_drop_context(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, dict):
        return True
    edits = value.get("edits") or []
    return not isinstance(edits, list) or any(
        not isinstance(e, dict) or e.get("type") not in _KEEPS_CONTEXT_EDITS for e in edits
    )


FIELDS = (
    used("messages", "user / assistant turns, and system turns where the client puts them"),
    used("system", "the first system message"),
    used("max_tokens"),
    used("temperature"),
    used("top_p"),
    used("top_k"),
    used("stop_sequences"),
    used("stream"),
    used("tools", "custom tools, rendered by the chat template"),
    used("tool_choice", TOOL_CHOICE),
    used("chat_template_kwargs", TEMPLATE_KWARGS),
    refused(
        "output_config",
        "effort is a hint for hosted models (accepted); a format would need constrained decoding",
        "with a format (structured output)",
        _output_config_constrains,
    ),
    refused(
        "context_management",
        "the proxy never edits the context: an edit that drops tool results would make "
        "the model see more than the client believes (clear_thinking is accepted)",
        "any edit but clear_thinking",
        _context_edits_drop_context,
    ),
    refused("mcp_servers", "server-side MCP tool calls the proxy cannot make", "non-empty", truthy),
    refused(
        "container", "a server-side code-execution container the proxy does not have", "set", is_set
    ),
    ignored("model", ONE_MODEL),
    ignored("thinking", _THINKING),
    ignored("metadata", SERVER_IGNORES),
    ignored("service_tier", SERVER_IGNORES),
    ignored("inference_geo", SERVER_IGNORES),
    ignored("speed", SERVER_IGNORES),
    ignored("betas", "beta feature flags of the hosted API"),
    ignored("cache_control", CACHE),
)

_STOP_REASON = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


class AnthropicMessages(ApiAdapter):
    name = "messages"
    routes = ("/v1/messages",)
    id_prefix = "msg_"
    id_hex_chars = 24
    fields = FIELDS
    counted_fields = (
        ("messages", "max_messages"),
        ("stop_sequences", "max_stop"),
        ("tools", "max_tools"),
    )
    length_fields = ("max_tokens",)

    def translate(
        self, body: dict[str, Any], tokenizer: Any, history: list[dict[str, Any]] | None
    ) -> ChatRequest:
        return messages_request_of(body, tokenizer)

    def answer(
        self,
        answer_id: str,
        generations: list[Generation],
        request: ChatRequest,
        prompt_len: int,
        tokenizer: Any,
        body: dict[str, Any],
    ) -> dict[str, Any]:
        model = body.get("model") if isinstance(body.get("model"), str) else MODEL_NAME
        return message_object(answer_id, generations[0], prompt_len, model)

    def stream(self, answer: dict[str, Any], request: ChatRequest) -> Response:
        return sse_response(message_events(answer))

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """Anthropic's error shape, which its SDK maps to its exception classes."""
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


MESSAGES = AnthropicMessages()


def parse_messages_request(body: Any, tokenizer: Any) -> ChatRequest:
    """Validate a Messages body and translate it to a chat request."""
    return MESSAGES.parse(body, tokenizer)


def messages_request_of(body: dict[str, Any], tokenizer: Any) -> ChatRequest:
    """A Messages body whose fields were checked, as a chat request."""
    max_tokens = requested_new_tokens(body, AnthropicMessages.length_fields, required=True)
    messages = _system(body.get("system")) + _messages(body.get("messages"))
    tools = _tools(body.get("tools"))
    choice = body.get("tool_choice")
    if choice is not None and (
        not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none")
    ):
        raise InvalidRequestError("'tool_choice' must be {type: auto|any|tool|none}")
    stop = check_stop_strings(body.get("stop_sequences"), "stop_sequences")
    chat_body = {
        "messages": messages,
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "top_k": body.get("top_k"),
        "stop": stop or None,
        "tools": tools or None,
        "tool_choice": "none"
        if isinstance(choice, dict) and choice.get("type") == "none"
        else None,
        "stream": body.get("stream") or False,
        "chat_template_kwargs": body.get("chat_template_kwargs"),
    }
    return chat_request_of(
        {k: v for k, v in chat_body.items() if v is not None}, tokenizer, max_new_tokens=max_tokens
    )


def _system(system: Any, where: str = "'system'") -> list[dict[str, Any]]:
    if system is None or system == "":
        return []
    if isinstance(system, str):
        return [{"role": "system", "content": system}]
    if isinstance(system, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in system
    ):
        return [{"role": "system", "content": "".join(b["text"] for b in system)}]
    raise InvalidRequestError(f"{where} must be a string or a list of text blocks")


def _messages(messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise InvalidRequestError("'messages' must be a non-empty list of {role, content}")
    out: list[dict[str, Any]] = []
    calls: set[str] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "system"):
            raise InvalidRequestError(f"messages[{i}].role must be 'user', 'assistant' or 'system'")
        content = m.get("content")
        if m["role"] == "system":  # Claude Code sends its environment this way
            out.extend(_system(content, f"messages[{i}].content"))
            continue
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        if not isinstance(content, list):
            raise InvalidRequestError(f"messages[{i}].content must be a string or a list of blocks")
        texts: list[str] = []
        parts: list[dict[str, Any]] = []  # text and images in order, where there are images
        tool_calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            where = f"messages[{i}].content[{j}]"
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                parts.append({"type": "text", "text": block["text"]})
            elif kind == "image" and m["role"] == "user":
                parts.append({"type": "image_url", "image_url": {"url": _image_url(block, where)}})
            elif kind == "tool_use" and m["role"] == "assistant":
                tool_calls.append(_tool_use(block, where))
                calls.add(block["id"])
            elif kind == "tool_result" and m["role"] == "user":
                results.append(_tool_result(block, where, calls))
            else:
                raise InvalidRequestError(
                    f"{where} has type {kind!r}; the proxy accepts text, image (user), tool_use "
                    "(assistant) and tool_result (user) blocks"
                )
        out.extend(results)
        if len(parts) > len(texts):  # images: the chat request places them
            out.append({"role": m["role"], "content": parts})
        elif texts or tool_calls or not results:
            message: dict[str, Any] = {"role": m["role"], "content": "".join(texts) or None}
            if tool_calls:
                message["tool_calls"] = tool_calls
            out.append(message)
    return out


def _image_url(block: dict[str, Any], where: str) -> str:
    """An image block's source as a data URI or an address."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "base64" and all(isinstance(source.get(k), str) for k in ("media_type", "data")):
        return f"data:{source['media_type']};base64,{source['data']}"
    if kind == "url" and isinstance(source.get("url"), str):
        return source["url"]
    raise InvalidRequestError(
        f"{where}.source must be {{type: base64, media_type, data}} or {{type: url, url}}"
    )


def _tool_use(block: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
        raise InvalidRequestError(f"{where} (tool_use) needs string id and name")
    arguments = block.get("input", {})
    if not isinstance(arguments, dict):
        raise InvalidRequestError(f"{where}.input must be an object")
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": json.dumps(arguments)},
    }


def _tool_result(block: dict[str, Any], where: str, calls: set[str]) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or call_id not in calls:
        raise InvalidRequestError(
            f"{where}.tool_use_id {call_id!r} answers no tool_use of this conversation"
        )
    content = block.get("content", "")
    if isinstance(content, list):
        if not all(isinstance(b, dict) and b.get("type") == "text" for b in content):
            raise InvalidRequestError(f"{where}.content may only hold text blocks")
        content = "".join(str(b.get("text", "")) for b in content)
    if not isinstance(content, str):
        raise InvalidRequestError(f"{where}.content must be a string or text blocks")
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _tools(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise InvalidRequestError("'tools' must be a list")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type", "custom") not in ("custom", None):
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise InvalidRequestError(
                f"tools[{i}] has type {kind!r}; the proxy serves custom tools"
            )
        out.append(function_tool(tool, "input_schema", f"tools[{i}]"))
    return out


def message_object(mid: str, g: Generation, prompt_len: int, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if g.content:
        content.append({"type": "text", "text": g.content})
    for call in g.tool_calls:
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            arguments = {"arguments": call["function"]["arguments"]}
        if not isinstance(arguments, dict):
            arguments = {"value": arguments}
        content.append(
            {
                "type": "tool_use",
                "id": "toolu_" + call["id"].removeprefix("call_"),
                "name": call["function"]["name"],
                "input": arguments,
            }
        )
    stop_reason = (
        "stop_sequence" if g.stop_sequence and not g.tool_calls else _STOP_REASON[g.finish]
    )
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": g.stop_sequence if stop_reason == "stop_sequence" else None,
        "usage": {
            "input_tokens": prompt_len,
            "output_tokens": g.response.output_len,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def message_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The stream of events that builds ``message``, as Anthropic's server sends them."""
    events: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, **data}))

    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**message["usage"], "output_tokens": 0}
    emit("message_start", message=start)
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in text_pieces(block["text"]):
                emit(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            emit(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        emit("content_block_stop", index=index)
    emit(
        "message_delta",
        delta={"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        usage={"output_tokens": message["usage"]["output_tokens"]},
    )
    emit("message_stop")
    return events
