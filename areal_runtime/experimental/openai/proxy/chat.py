# SPDX-License-Identifier: Apache-2.0
"""Translate OpenAI chat-completion requests to engine requests and answers back.

Request fields map onto ``GenerationHyperparameters``; fields the engine cannot honour are
refused with a 400 that names them rather than silently ignored.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters, stop_ids_of
from areal_runtime.api.io_struct import ModelResponse
from areal_runtime.errors import InvalidRequestError

DEFAULT_MAX_NEW_TOKENS = 512
_IGNORED = {"model", "user", "metadata", "store", "seed", "parallel_tool_calls", "service_tier"}
_SUPPORTED = {
    "messages", "n", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop",
    "logprobs", "top_logprobs", "tools", "tool_choice", "chat_template_kwargs",
    "frequency_penalty", "stream", "response_format", "max_total_tokens", "top_k",
    "presence_penalty",
}  # fmt: skip
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


@dataclass
class ChatRequest:
    messages: list[dict[str, Any]]
    gconfig: GenerationHyperparameters
    n: int
    logprobs: bool
    tools: list[dict[str, Any]] | None
    template_kwargs: dict[str, Any]
    max_total_tokens: int | None  # prompt + completion, AReaL's extension


def cap_new_tokens(req: ChatRequest, prompt_len: int, engine_max_tokens: int | None) -> None:
    """Shrink ``max_new_tokens`` so prompt + completion fit both total caps (AReaL's rule)."""
    caps = [c for c in (req.max_total_tokens, engine_max_tokens) if c is not None]
    if not caps:
        return
    room = min(caps) - prompt_len
    if room <= 0:
        raise InvalidRequestError(
            f"the prompt has {prompt_len} tokens, which leaves no room for a completion under "
            f"the total limit of {min(caps)} tokens (max_total_tokens / engine_max_tokens)"
        )
    req.gconfig.max_new_tokens = min(req.gconfig.max_new_tokens, room)


def parse_request(body: Any, tokenizer: Any) -> ChatRequest:
    """Validate an OpenAI chat-completion body; raises :class:`InvalidRequestError`."""
    if not isinstance(body, dict):
        raise InvalidRequestError("the request body must be a JSON object")
    unknown = sorted(k for k in body if k not in _SUPPORTED | _IGNORED)
    if unknown:
        raise InvalidRequestError(
            f"unsupported field(s) {unknown}; the proxy accepts {sorted(_SUPPORTED)}"
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequestError("'messages' must be a non-empty list of {role, content} objects")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise InvalidRequestError(f"messages[{i}] must be an object with a 'role'")
    if body.get("stream"):
        raise InvalidRequestError("stream=true is not supported by the areal-devkit proxy")
    fmt = body.get("response_format")
    if fmt not in (None, {"type": "text"}):
        raise InvalidRequestError("response_format other than text is not supported")
    if body.get("top_logprobs"):
        raise InvalidRequestError("top_logprobs is not supported; use logprobs=true")
    if body.get("max_tokens") is not None and body.get("max_completion_tokens") is not None:
        raise InvalidRequestError(
            "set max_completion_tokens or the deprecated max_tokens, not both"
        )
    n = body.get("n", 1) or 1
    if not isinstance(n, int) or n < 1:
        raise InvalidRequestError(f"'n' must be a positive integer, got {n!r}")
    temperature = _number(body, "temperature", 1.0)
    top_p = _number(body, "top_p", 1.0)
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise InvalidRequestError("'stop' must be a string or a list of strings")
    max_new = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_new is None:
        max_new = DEFAULT_MAX_NEW_TOKENS
    if not isinstance(max_new, int) or max_new < 1:
        raise InvalidRequestError(
            f"max_completion_tokens must be a positive integer, got {max_new!r}"
        )
    max_total = body.get("max_total_tokens")
    if max_total is not None and (not isinstance(max_total, int) or max_total < 1):
        raise InvalidRequestError(f"max_total_tokens must be a positive integer, got {max_total!r}")
    if body.get("presence_penalty"):
        raise InvalidRequestError(
            "presence_penalty is not supported (frequency_penalty is); drop it"
        )
    top_k = body.get("top_k")
    if top_k is not None and (not isinstance(top_k, int) or top_k == 0 or top_k < -1):
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
        frequency_penalty=_number(body, "frequency_penalty", 0.0),
        **({"top_k": top_k} if top_k not in (None, -1) else {}),
    )
    tools = body.get("tools") or None
    if body.get("tool_choice") == "none":
        tools = None
    return ChatRequest(
        messages=[_plain(m) for m in messages],
        gconfig=gconfig,
        n=n,
        logprobs=bool(body.get("logprobs")),
        tools=tools,
        template_kwargs=template_kwargs,
        max_total_tokens=max_total,
    )


def _number(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequestError(f"{key!r} must be a number, got {value!r}")
    return float(value)


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


def parse_tool_calls(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """Split Qwen-style ``<tool_call>{json}</tool_call>`` blocks out of the reply text."""
    calls = []
    for raw in _TOOL_CALL.findall(text):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if not isinstance(parsed, dict) or "name" not in parsed:
            continue
        args = parsed.get("arguments", {})
        calls.append(
            {
                "id": "call_" + uuid.uuid4().hex[:24],
                "type": "function",
                "function": {
                    "name": str(parsed["name"]),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    if not calls:
        return text, []
    rest = _TOOL_CALL.sub("", text).strip()
    return rest or None, calls


def build_choice(
    index: int, resp: ModelResponse, tokenizer: Any, want_logprobs: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(choice, assistant message)`` for one engine response."""
    tokens = _visible_tokens(resp)
    # Stop tokens are already stripped; keep the rest so `<tool_call>` tags survive decoding.
    text = tokenizer.decode(tokens, skip_special_tokens=False)
    content, calls = parse_tool_calls(text)
    if content is None and not calls:
        content = ""  # the model stopped at once: an empty answer, not a missing one
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
        finish = "tool_calls"
    else:
        finish = "length" if resp.stop_reason == "length" else "stop"
    choice: dict[str, Any] = {
        "index": index,
        "message": message,
        "finish_reason": finish,
        "logprobs": None,
    }
    if want_logprobs:
        choice["logprobs"] = {
            "content": [
                {
                    "token": tokenizer.decode([tok]),
                    "logprob": lp,
                    "bytes": list(tokenizer.decode([tok]).encode()),
                    "top_logprobs": [],
                }
                for tok, lp in zip(tokens, resp.output_logprobs, strict=False)
            ]
        }
    return choice, message


def _visible_tokens(resp: ModelResponse) -> list[int]:
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
