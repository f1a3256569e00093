# SPDX-License-Identifier: Apache-2.0
"""Translate OpenAI chat-completion requests to engine requests and answers back.

Request fields map onto ``GenerationHyperparameters``; which fields are accepted, ignored or
refused (with a 400 that names them) is the table in ``field_policy.py``.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters, stop_ids_of
from areal_runtime.errors import InvalidRequestError
from areal_runtime.experimental.openai.proxy.field_policy import check_fields
from areal_runtime.experimental.openai.proxy.generation import Generation

DEFAULT_MAX_NEW_TOKENS = 512
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


@dataclass
class ChatRequest:
    messages: list[dict[str, Any]]
    gconfig: GenerationHyperparameters
    n: int
    logprobs: bool
    tools: list[dict[str, Any]] | None
    template_kwargs: dict[str, Any]
    max_total_tokens: int | None  # prompt + completion, AReaL's extension
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage
    stop: list[str] = field(default_factory=list)


def cap_new_tokens(req: ChatRequest, prompt_len: int, engine_max_tokens: int | None) -> None:
    """Shrink ``max_new_tokens`` so prompt + completion fit both total caps (AReaL's rule)."""
    caps = [c for c in (req.max_total_tokens, engine_max_tokens) if c is not None]
    if not caps:
        # The engine's own limits (positions) apply; GenerationHyperparameters' default total
        # (32768) must not refuse a long agent prompt the model can hold.
        req.gconfig.max_tokens = prompt_len + req.gconfig.max_new_tokens
        return
    room = min(caps) - prompt_len
    if room <= 0:
        raise InvalidRequestError(
            f"the prompt has {prompt_len} tokens, which leaves no room for a completion under "
            f"the total limit of {min(caps)} tokens (max_total_tokens / engine_max_tokens)"
        )
    req.gconfig.max_new_tokens = min(req.gconfig.max_new_tokens, room)
    req.gconfig.max_tokens = prompt_len + req.gconfig.max_new_tokens


def parse_request(body: Any, tokenizer: Any) -> ChatRequest:
    """Validate an OpenAI chat-completion body; raises :class:`InvalidRequestError`."""
    if not isinstance(body, dict):
        raise InvalidRequestError("the request body must be a JSON object")
    check_fields("chat", body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequestError("'messages' must be a non-empty list of {role, content} objects")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise InvalidRequestError(f"messages[{i}] must be an object with a 'role'")
        if not isinstance(m["role"], str) or m["role"] not in _ROLES:
            raise InvalidRequestError(
                f"messages[{i}].role {m['role']!r} is not one of {sorted(_ROLES)}"
            )
        content = m.get("content")
        if content is not None and not isinstance(content, str | list):
            raise InvalidRequestError(f"messages[{i}].content must be a string or a list of parts")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict) or not isinstance(part.get("text", ""), str):
                raise InvalidRequestError(
                    f"messages[{i}].content[{j}] must be a part object whose 'text' is a string"
                )
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise InvalidRequestError(f"'stream' must be true or false, got {stream!r}")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict) or set(options) - {"include_usage"}:
        raise InvalidRequestError("'stream_options' may only hold include_usage")
    if not isinstance(options.get("include_usage", False), bool):
        raise InvalidRequestError("'stream_options.include_usage' must be true or false")
    if options and not stream:
        raise InvalidRequestError("'stream_options' is only allowed with stream=true")
    if body.get("max_tokens") is not None and body.get("max_completion_tokens") is not None:
        raise InvalidRequestError(
            "set max_completion_tokens or the deprecated max_tokens, not both"
        )
    n = body.get("n", 1)
    n = 1 if n is None else n
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidRequestError(f"'n' must be a positive integer, got {n!r}")
    temperature = _number(body, "temperature", 1.0, 0.0, 100.0)
    top_p = _number(body, "top_p", 1.0, 0.0, 1.0)
    if top_p == 0:
        raise InvalidRequestError("'top_p' must be in (0, 1], got 0")
    logprobs = body.get("logprobs") or False
    if not isinstance(logprobs, bool):
        raise InvalidRequestError(f"'logprobs' must be true or false, got {logprobs!r}")
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not (
        isinstance(stop, list) and all(isinstance(s, str) and s for s in stop)
    ):
        raise InvalidRequestError("'stop' must be a string or a list of non-empty strings")
    max_key = "max_tokens" if body.get("max_completion_tokens") is None else "max_completion_tokens"
    max_new = body.get(max_key)
    if max_new is None:
        max_new = DEFAULT_MAX_NEW_TOKENS
    if isinstance(max_new, bool) or not isinstance(max_new, int) or max_new < 1:
        raise InvalidRequestError(f"{max_key} must be a positive integer, got {max_new!r}")
    max_total = body.get("max_total_tokens")
    if max_total is not None and (
        isinstance(max_total, bool) or not isinstance(max_total, int) or max_total < 1
    ):
        raise InvalidRequestError(f"max_total_tokens must be a positive integer, got {max_total!r}")
    top_k = body.get("top_k")
    if top_k is not None and (
        isinstance(top_k, bool) or not isinstance(top_k, int) or top_k == 0 or top_k < -1
    ):
        raise InvalidRequestError(f"top_k must be a positive integer or -1 (off), got {top_k!r}")
    template_kwargs = body.get("chat_template_kwargs") or {}
    if not isinstance(template_kwargs, dict):
        raise InvalidRequestError("'chat_template_kwargs' must be an object")
    gconfig = GenerationHyperparameters(
        n_samples=1,
        max_new_tokens=max_new,
        temperature=temperature,
        greedy=temperature == 0,
        top_p=top_p,
        stop=stop or None,
        stop_token_ids=stop_ids_of(tokenizer),
        frequency_penalty=_number(body, "frequency_penalty", 0.0, -2.0, 2.0),
        **({"top_k": top_k} if top_k not in (None, -1) else {}),
    )
    tools = check_tools(body.get("tools"), "tools") or None
    if body.get("tool_choice") == "none":
        tools = None
    return ChatRequest(
        messages=[_plain(m) for m in messages],
        gconfig=gconfig,
        n=n,
        logprobs=logprobs,
        tools=tools,
        template_kwargs=template_kwargs,
        max_total_tokens=max_total,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
        stop=stop or [],
    )


def check_tools(tools: Any, where: str) -> list[dict[str, Any]]:
    """Chat-format function tools, each with a name and an object JSON schema."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise InvalidRequestError(f"'{where}' must be a list of tools")
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise InvalidRequestError(
                f"{where}[{i}] must be {{type: 'function', function: {{name, parameters}}}}"
            )
        check_function_schema(fn.get("name"), fn.get("parameters"), f"{where}[{i}].function")
    return tools


def check_function_schema(name: Any, schema: Any, where: str) -> None:
    """A tool's name and JSON schema, checked the way the model will see them."""
    if not isinstance(name, str) or not name:
        raise InvalidRequestError(f"{where}.name must be a non-empty string")
    if schema is None:
        return
    if not isinstance(schema, dict):
        raise InvalidRequestError(f"{where} parameters must be a JSON schema object")
    if schema.get("type", "object") != "object":
        raise InvalidRequestError(f"{where} parameters must have type 'object'")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or any(
        not isinstance(v, dict) for v in properties.values()
    ):
        raise InvalidRequestError(f"{where} parameters.properties must map names to schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(not isinstance(r, str) for r in required):
        raise InvalidRequestError(f"{where} parameters.required must be a list of names")


def _number(body: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequestError(f"{key!r} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not low <= number <= high:
        raise InvalidRequestError(f"{key!r} must be between {low} and {high}, got {value!r}")
    return number


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    """Content parts joined into text, so every chat template can render the message."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    out = {k: v for k, v in message.items() if v is not None}
    out["content"] = content or ""
    return out


def render_prompt(tokenizer: Any, req: ChatRequest) -> list[int]:
    try:
        return list(
            tokenizer.apply_chat_template(
                req.messages,
                tools=req.tools,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
                **req.template_kwargs,
            )
        )
    except Exception as exc:
        raise InvalidRequestError(
            f"the chat template could not render these messages: {exc}"
        ) from exc


def completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex[:29]


MODEL_NAME = "areal-runtime"


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
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "function": {"arguments": call["function"]["arguments"]},
                        }
                    ]
                }
            )
        chunk({}, choice["finish_reason"])
    if include_usage:
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks


def text_pieces(text: str, size: int = 4) -> list[str]:
    """``text`` in small pieces, as a streaming server sends it."""
    return [text[i : i + size] for i in range(0, len(text), size)]
