# SPDX-License-Identifier: Apache-2.0
"""What every API's request becomes, and the conventions all of them share.

Each API adapter (``apis/``) translates its own body into one :class:`ChatRequest`: the messages
the chat template renders and the sampling settings the engine reads. The checks that every
adapter applies (positive integers, tool schemas), the ids of completions and their samples
(``base``, ``base/1``, ``base/2`` for ``n > 1``), the session key a request carries and the model
name the answers echo live here, once.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters, stop_ids_of
from areal_runtime.engine._contract import NO_TOTAL_CAP
from areal_runtime.errors import InvalidRequestError

MODEL_NAME = "areal-runtime"  # the one model the proxy serves; answers echo it
DEFAULT_MAX_NEW_TOKENS = 512  # when a request names no completion length
# Chat Completions' completion-length fields; the later one is the deprecated alias.
CHAT_LENGTH_FIELDS = ("max_completion_tokens", "max_tokens")
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


@dataclass
class ChatRequest:
    """A request in chat-completions terms: what the engine samples from, whatever the API."""

    messages: list[dict[str, Any]]
    gconfig: GenerationHyperparameters
    n: int
    logprobs: bool
    tools: list[dict[str, Any]] | None
    template_kwargs: dict[str, Any]
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage
    stop: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)  # the engine's image_data, in prompt order


# --- ids --------------------------------------------------------------------------------------


def new_id(prefix: str, hex_chars: int = 29) -> str:
    """A fresh completion id in the API's own style (``chatcmpl-…``, ``resp_…``, ``msg_…``)."""
    return prefix + uuid.uuid4().hex[:hex_chars]


def sample_id(base_id: str, index: int) -> str:
    """The id of sample ``index`` of a request: the first keeps ``base_id``, others ``base/i``."""
    return base_id if index == 0 else f"{base_id}/{index}"


def base_id_of(interaction_id: str) -> str:
    """The request's id that a sample id (``base/i``) belongs to."""
    return interaction_id.split("/", 1)[0]


def is_base_id(interaction_id: str) -> bool:
    """True for the id a client saw, False for the id of an extra sample (``base/i``)."""
    return "/" not in interaction_id


def samples_of(base_id: str, interaction_id: str) -> bool:
    """True when ``interaction_id`` is ``base_id`` or one of its samples."""
    return interaction_id == base_id or interaction_id.startswith(base_id + "/")


# --- who is asking ----------------------------------------------------------------------------


def session_key(headers: Mapping[str, str]) -> str | None:
    """The session key: ``Authorization: Bearer <key>`` (OpenAI SDKs) or ``x-api-key``."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("x-api-key")


# --- checks every adapter applies -------------------------------------------------------------


def requested_new_tokens(
    body: Mapping[str, Any], fields: tuple[str, ...], *, required: bool = False
) -> int:
    """The completion length a body asks for, read once per request.

    ``fields`` are the API's completion-length fields (its adapter's ``length_fields``, whose
    size ``check_request_limits`` caps), the later ones deprecated aliases of the first: at
    most one may be set. None set gives ``DEFAULT_MAX_NEW_TOKENS``, or a 400 if ``required``.
    """
    given = [name for name in fields if body.get(name) is not None]
    if len(given) > 1:
        raise InvalidRequestError(f"set {given[0]} or the deprecated {given[1]}, not both")
    if not given:
        if required:
            raise InvalidRequestError(f"'{fields[0]}' is required: a positive integer, got None")
        return DEFAULT_MAX_NEW_TOKENS
    value = positive_int(body, given[0])
    assert value is not None
    return value


def positive_int(body: Mapping[str, Any], name: str, default: int | None = None) -> int | None:
    """``body[name]`` as a positive integer; ``default`` when absent or null; a 400 otherwise."""
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequestError(f"'{name}' must be a positive integer, got {value!r}")
    return value


def number_in(body: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    """``body[key]`` as a float within ``[low, high]``; ``default`` when absent or null."""
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


def function_tool(tool: dict[str, Any], schema_key: str, where: str) -> dict[str, Any]:
    """A flat tool (``{name, description, <schema_key>}``) as the chat-format tool templates read.

    The Responses API calls the schema ``parameters``, Anthropic's Messages ``input_schema``.
    """
    schema = tool.get(schema_key)
    check_function_schema(tool.get("name"), schema, where)
    fn = {"name": tool["name"], "parameters": schema or {"type": "object"}}
    if tool.get("description"):
        fn["description"] = tool["description"]
    return {"type": "function", "function": fn}


def check_chat_tools(tools: Any, where: str) -> list[dict[str, Any]]:
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


def check_stop_strings(stop: Any, name: str) -> list[str] | None:
    """A list of non-empty stop strings (chat also takes one string); None when absent."""
    if isinstance(stop, str) and name == "stop":
        stop = [stop]
    if stop is not None and not (
        isinstance(stop, list) and all(isinstance(s, str) and s for s in stop)
    ):
        kind = "a string or a list" if name == "stop" else "a list"
        raise InvalidRequestError(f"'{name}' must be {kind} of non-empty strings")
    return stop


# --- the chat request every API becomes -------------------------------------------------------


def chat_request_of(
    body: dict[str, Any], tokenizer: Any, *, max_new_tokens: int | None = None
) -> ChatRequest:
    """A chat-completions body (fields already checked against the API's table) as a request.

    ``max_new_tokens`` is the completion length another API's adapter already read with
    :func:`requested_new_tokens`; None reads the chat fields. The request's total cap
    (``max_total_tokens``, AReaL's extension) becomes ``gconfig.max_tokens``, which
    ``token_budget`` applies once the prompt is rendered.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequestError("'messages' must be a non-empty list of {role, content} objects")
    for i, m in enumerate(messages):
        _check_message(m, i)
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
    n = positive_int(body, "n", 1)
    temperature = number_in(body, "temperature", 1.0, 0.0, 100.0)
    top_p = number_in(body, "top_p", 1.0, 0.0, 1.0)
    if top_p == 0:
        raise InvalidRequestError("'top_p' must be in (0, 1], got 0")
    logprobs = body.get("logprobs") or False
    if not isinstance(logprobs, bool):
        raise InvalidRequestError(f"'logprobs' must be true or false, got {logprobs!r}")
    stop = check_stop_strings(body.get("stop"), "stop")
    if max_new_tokens is None:
        max_new_tokens = requested_new_tokens(body, CHAT_LENGTH_FIELDS)
    max_total = positive_int(body, "max_total_tokens")
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
        max_new_tokens=max_new_tokens,
        max_tokens=NO_TOTAL_CAP if max_total is None else max_total,
        temperature=temperature,
        greedy=temperature == 0,
        top_p=top_p,
        stop=stop or None,
        stop_token_ids=stop_ids_of(tokenizer),
        frequency_penalty=number_in(body, "frequency_penalty", 0.0, -2.0, 2.0),
        **({"top_k": top_k} if top_k not in (None, -1) else {}),
    )
    tools = check_chat_tools(body.get("tools"), "tools") or None
    if body.get("tool_choice") == "none":
        tools = None
    images: list[str] = []
    plain = [_plain(m, images) for m in messages]
    if images:
        _check_template_places_images(tokenizer, plain)
    return ChatRequest(
        messages=plain,
        gconfig=gconfig,
        n=n or 1,
        logprobs=logprobs,
        tools=tools,
        template_kwargs=template_kwargs,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
        stop=stop or [],
        images=images,
    )


def _check_message(m: Any, i: int) -> None:
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
        if part.get("type") == "image_url":
            url = _image_url_of(part)
            if not isinstance(url, str) or not url:
                raise InvalidRequestError(
                    f"messages[{i}].content[{j}].image_url must hold the image's url (a data "
                    "URI or an address)"
                )


_DATA_URI = re.compile(r"data:image/[\w.+-]+;base64,(.+)", re.S)


def _image_url_of(part: dict[str, Any]) -> Any:
    """An ``image_url`` part's url: ``{"url": ...}`` as OpenAI sends it, or a bare string."""
    url = part.get("image_url")
    return url.get("url") if isinstance(url, dict) else url


def _image_reference(url: str) -> str:
    """What the engine takes for an image: a data URI's base64, or the address as sent (as
    AReaL's client passes them on to SGLang)."""
    match = _DATA_URI.fullmatch(url)
    return match.group(1) if match else url


def _plain(message: dict[str, Any], images: list[str]) -> dict[str, Any]:
    """Content parts joined into text, so every chat template can render the message; a
    message with images keeps text and ``{"type": "image"}`` parts (the vision templates'
    placeholder) and its images go to ``images``, for the engine."""
    content = message.get("content")
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        if any(p.get("type") == "image_url" for p in parts):
            content = []
            for part in parts:
                if part.get("type") == "image_url":
                    images.append(_image_reference(_image_url_of(part)))
                    content.append({"type": "image"})
                elif part.get("text"):
                    content.append({"type": "text", "text": part["text"]})
        else:
            content = "".join(p.get("text", "") for p in parts)
    out = {k: v for k, v in message.items() if v is not None}
    out["content"] = content or ""
    return out


def _check_template_places_images(tokenizer: Any, messages: list[dict[str, Any]]) -> None:
    """Refuse images that the chat template would drop: a text model's template renders the
    text parts only, and the engine would answer without ever seeing the image."""
    without = [
        {**m, "content": [p for p in m["content"] if p.get("type") != "image"]}
        if isinstance(m["content"], list)
        else m
        for m in messages
    ]
    try:
        placed = tokenizer.apply_chat_template(messages, tokenize=False) != (
            tokenizer.apply_chat_template(without, tokenize=False)
        )
    except Exception as exc:
        raise InvalidRequestError(f"the chat template could not render the images: {exc}") from None
    if not placed:
        raise InvalidRequestError(
            "the request holds images, and this model's chat template has no place for one "
            "(the engine would answer without seeing them): serve a vision model whose chat "
            "template places images, or send the image's content as text"
        )
