# SPDX-License-Identifier: Apache-2.0
"""Which request fields the proxy accepts, per API: the one table, rendered into the docs.

The proxy records the tokens the engine sampled as the trajectory. A field is accepted when the
agent's view of the conversation stays true: either the proxy honours it (``used``), or it cannot
change which tokens are sampled (``ignored``: reasoning effort, metadata, cache control, betas,
thinking settings...). A field is refused, with a 400 that names it, only when honouring it was
the client's premise and the proxy cannot: then the recorded trajectory would differ from what
the client believes it got (a penalty not applied, a schema not enforced, a server-side tool
never run). Fields the table does not know are refused too, pointing here: a new client field
is added to the table (and the docs regenerated) once someone has decided which kind it is.

``docs/proxy_fields.md`` is :func:`render_markdown` of this table; a test keeps them equal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from areal_runtime.errors import InvalidRequestError

Api = Literal["chat", "responses", "messages"]
Handling = Literal["used", "ignored", "refused"]
ROUTES: dict[Api, str] = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}
DOC_PATH = "docs/proxy_fields.md"


def _never(value: Any) -> bool:
    return False


def _truthy(value: Any) -> bool:
    return bool(value)


def _set(value: Any) -> bool:
    return value is not None


@dataclass(frozen=True)
class FieldRule:
    """One request field: how the proxy treats it and, if ever, which values it refuses.

    ``handling``: ``used`` (honoured), ``ignored`` (cannot change the sampled tokens) or
    ``refused`` (the proxy cannot honour it; accepted only with a value that asks for nothing).
    """

    field: str
    handling: Handling
    why: str
    refused_when: str = ""  # the refused values, in words ("" = never refused)
    refuses: Callable[[Any], bool] = _never


def _used(field: str, why: str = "honoured by the engine") -> FieldRule:
    return FieldRule(field, "used", why)


def _ignored(field: str, why: str) -> FieldRule:
    return FieldRule(field, "ignored", why)


# --- predicates for the values that are refused -----------------------------------------------


def _not_text_format(value: Any) -> bool:
    return value not in (None, {}, {"type": "text"})


def _responses_text_not_plain(value: Any) -> bool:
    if value in (None, {}):
        return False
    if not isinstance(value, dict) or set(value) - {"format", "verbosity"}:
        return True
    return value.get("format") not in (None, {"type": "text"})


def _output_config_constrains(value: Any) -> bool:
    if value is None:
        return False
    return not isinstance(value, dict) or value.get("format") is not None


_KEEPS_CONTEXT_EDITS = {"clear_thinking_20251015"}


def _context_edits_drop_context(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, dict):
        return True
    edits = value.get("edits") or []
    return not isinstance(edits, list) or any(
        not isinstance(e, dict) or e.get("type") not in _KEEPS_CONTEXT_EDITS for e in edits
    )


def _modalities_beyond_text(value: Any) -> bool:
    return value is not None and value != ["text"]


_SERVER_IGNORES = "only steers the hosted model or its billing; sampling does not read it"
_THINKING = (
    "the model thinks if its chat template makes it; what it samples, thinking included, is "
    "what the client gets and what is recorded"
)
_EFFORT = "an effort hint for hosted reasoning models; the local sampling has no such knob"
_CACHE = "prompt caching is a server-side cost optimisation; the tokens sampled are the same"

# The same rule in chat completions and the Responses API.
TOP_LOGPROBS = FieldRule(
    "top_logprobs",
    "refused",
    "the engine returns the sampled token's logprob only, not alternatives",
    "non-zero",
    _truthy,
)


POLICY: dict[Api, tuple[FieldRule, ...]] = {
    "chat": (
        _used("messages"),
        _used("n"),
        _used("temperature"),
        _used("top_p"),
        _used("top_k"),
        _used("max_tokens"),
        _used("max_completion_tokens"),
        _used("max_total_tokens", "AReaL's extension: prompt + completion cap"),
        _used("stop"),
        _used("logprobs"),
        _used("tools", "rendered by the chat template; calls parsed from the reply"),
        _used("tool_choice", "'none' drops the tools; other values leave the choice to the model"),
        _used("chat_template_kwargs", "passed to the chat template"),
        _used("frequency_penalty"),
        _used("stream"),
        _used("stream_options"),
        FieldRule(
            "presence_penalty",
            "refused",
            "the engine does not apply it: the tokens would be sampled without the penalty",
            "non-zero",
            _truthy,
        ),
        FieldRule(
            "response_format",
            "refused",
            "the engine does not constrain decoding to a schema: the reply could break it",
            "anything but {type: text}",
            _not_text_format,
        ),
        TOP_LOGPROBS,
        FieldRule(
            "logit_bias",
            "refused",
            "the engine does not bias logits: the tokens would be sampled without it",
            "non-empty",
            _truthy,
        ),
        FieldRule(
            "modalities",
            "refused",
            "the engine generates text only",
            "anything but ['text']",
            _modalities_beyond_text,
        ),
        FieldRule("audio", "refused", "the engine generates text only", "set", _set),
        FieldRule(
            "web_search_options",
            "refused",
            "a server-side search the proxy cannot run",
            "set",
            _set,
        ),
        FieldRule(
            "functions",
            "refused",
            "the legacy function-calling format; send 'tools'",
            "non-empty",
            _truthy,
        ),
        FieldRule(
            "function_call",
            "refused",
            "the legacy function-calling format; send 'tool_choice'",
            "set",
            _set,
        ),
        _ignored("model", "the proxy serves one model; the reply echoes the name"),
        _ignored("user", _SERVER_IGNORES),
        _ignored("metadata", _SERVER_IGNORES),
        _ignored("store", _SERVER_IGNORES),
        _ignored("service_tier", _SERVER_IGNORES),
        _ignored("safety_identifier", _SERVER_IGNORES),
        _ignored("prompt_cache_key", _CACHE),
        _ignored("prompt_cache_retention", _CACHE),
        _ignored("parallel_tool_calls", "the model may call several tools; all are returned"),
        _ignored("seed", "the engine's own seed decides; the sampled tokens are recorded"),
        _ignored("reasoning_effort", _EFFORT),
        _ignored("verbosity", _EFFORT),
        _ignored("prediction", "a latency hint; it never changes the reply"),
    ),
    "responses": (
        _used("input", "messages and function_call / function_call_output items"),
        _used("instructions", "the system message"),
        _used("previous_response_id", "continues from a response of the same session"),
        _used("max_output_tokens"),
        _used("max_total_tokens", "AReaL's extension: prompt + completion cap"),
        _used("temperature"),
        _used("top_p"),
        _used("top_k"),
        _used("frequency_penalty"),
        _used("tools", "function tools, rendered by the chat template"),
        _used("tool_choice", "'none' drops the tools; other values leave the choice to the model"),
        _used("stream"),
        _used("chat_template_kwargs", "passed to the chat template"),
        FieldRule(
            "text",
            "refused",
            "the engine does not constrain decoding to a schema: the reply could break it",
            "a format other than text",
            _responses_text_not_plain,
        ),
        TOP_LOGPROBS,
        FieldRule(
            "background",
            "refused",
            "background responses are polled later; the proxy answers in the request",
            "true",
            _truthy,
        ),
        FieldRule(
            "conversation",
            "refused",
            "server-side conversations the proxy does not store; send the input items",
            "set",
            _set,
        ),
        FieldRule(
            "prompt",
            "refused",
            "a stored prompt template the proxy does not have",
            "set",
            _set,
        ),
        _ignored("model", "the proxy serves one model; the reply echoes the name"),
        _ignored("reasoning", _EFFORT + "; the Agents SDK sends it by default"),
        _ignored("include", "asks for extra output (encrypted reasoning...) the proxy has none of"),
        _ignored("store", _SERVER_IGNORES),
        _ignored("metadata", _SERVER_IGNORES),
        _ignored("user", _SERVER_IGNORES),
        _ignored("service_tier", _SERVER_IGNORES),
        _ignored("safety_identifier", _SERVER_IGNORES),
        _ignored("prompt_cache_key", _CACHE),
        _ignored("prompt_cache_retention", _CACHE),
        _ignored("parallel_tool_calls", "the model may call several tools; all are returned"),
        _ignored("max_tool_calls", "limits built-in tools, which the proxy has none of"),
        _ignored("truncation", "the proxy never drops input: a prompt too long is a 400"),
        _ignored("stream_options", "obfuscation padding only"),
    ),
    "messages": (
        _used("messages", "user / assistant turns, and system turns where the client puts them"),
        _used("system", "the first system message"),
        _used("max_tokens"),
        _used("temperature"),
        _used("top_p"),
        _used("top_k"),
        _used("stop_sequences"),
        _used("stream"),
        _used("tools", "custom tools, rendered by the chat template"),
        _used("tool_choice", "'none' drops the tools; other values leave the choice to the model"),
        _used("chat_template_kwargs", "passed to the chat template"),
        FieldRule(
            "output_config",
            "ignored",
            "effort is a hint for hosted models; a format would need constrained decoding",
            "with a format (structured output)",
            _output_config_constrains,
        ),
        FieldRule(
            "context_management",
            "ignored",
            "the proxy never edits the context: an edit that drops tool results would make "
            "the model see more than the client believes",
            "any edit but clear_thinking",
            _context_edits_drop_context,
        ),
        FieldRule(
            "mcp_servers",
            "refused",
            "server-side MCP tool calls the proxy cannot make",
            "non-empty",
            _truthy,
        ),
        FieldRule(
            "container",
            "refused",
            "a server-side code-execution container the proxy does not have",
            "set",
            _set,
        ),
        _ignored("model", "the proxy serves one model; the reply echoes the name"),
        _ignored("thinking", _THINKING),
        _ignored("metadata", _SERVER_IGNORES),
        _ignored("service_tier", _SERVER_IGNORES),
        _ignored("inference_geo", _SERVER_IGNORES),
        _ignored("speed", _SERVER_IGNORES),
        _ignored("betas", "beta feature flags of the hosted API"),
        _ignored("cache_control", _CACHE),
    ),
}


def rules(api: Api) -> dict[str, FieldRule]:
    return {rule.field: rule for rule in POLICY[api]}


def check_fields(api: Api, body: dict[str, Any]) -> None:
    """Refuse, naming the field, what the table refuses or does not know."""
    known = rules(api)
    unknown = sorted(k for k in body if k not in known)
    if unknown:
        raise InvalidRequestError(
            f"unsupported field(s) {unknown} for {ROUTES[api]}: the proxy does not know whether "
            f"they change what is sampled; drop them, or add them to the table in "
            f"areal_runtime/experimental/openai/proxy/field_policy.py (see {DOC_PATH})"
        )
    for name, value in body.items():
        rule = known[name]
        if rule.refuses(value):
            raise InvalidRequestError(
                f"{name} is not supported by the proxy when {rule.refused_when} "
                f"(got {value!r}): {rule.why}; leave it out"
            )


def render_markdown() -> str:
    """``docs/proxy_fields.md``: the table above, one section per API."""
    lines = [
        "# Request fields the agent proxy accepts",
        "",
        "Generated from `POLICY` in `areal_runtime/experimental/openai/proxy/field_policy.py` "
        "(`python -m areal_runtime.experimental.openai.proxy.field_policy > "
        f"{DOC_PATH}`); a test keeps the two equal.",
        "",
        "The proxy records the tokens the engine sampled. **used**: the proxy honours the "
        "field. **ignored**: accepted, and it cannot change which tokens are sampled. "
        "**refused**: accepted only with a value that asks for nothing (0, empty, text). Any "
        "field is refused (HTTP 400 naming it) with the values in *refused when*: honouring "
        "them was the client's premise, and the recorded trajectory would differ from what "
        "the client believes it got. Fields not listed are refused.",
    ]
    for api, route in ROUTES.items():
        lines += ["", f"## `{route}`", "", "| field | handling | refused when | why |"]
        lines.append("|---|---|---|---|")
        order = ("used", "ignored", "refused")
        for rule in sorted(POLICY[api], key=lambda r: (order.index(r.handling), r.field)):
            refused = rule.refused_when or "never"
            lines.append(f"| `{rule.field}` | {rule.handling} | {refused} | {rule.why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
