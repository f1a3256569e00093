# SPDX-License-Identifier: Apache-2.0
"""What one proxy request may hold, checked in one place before anything else reads it.

:func:`read_json` caps the body (413; ``utils/http_body.py`` reads it, as it does for the
SGLang-compatible server), its nesting and every string, and refuses NaN and Infinity (Python's
json reads them; no SDK sends them, and they cannot be echoed back as JSON).
:func:`check_request_limits` caps the fields that cost engine time or memory: message count,
completion length, ``n``, stop strings and tools, under each API's own field names. Every
refusal names the field at fault.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.errors import ProxyHTTPError
from areal_runtime.utils.http_body import BodyTooLarge, read_capped

if TYPE_CHECKING:
    from areal_runtime.experimental.openai.proxy.apis.adapter import ApiAdapter


# The proxy's name for the one limits type the SGLang-compatible server uses too; the fields
# it checks are max_body_bytes, max_depth, max_string_chars, max_messages, max_new_tokens,
# max_n, max_stop and max_tools (``docs/runtime.md``, "Limits").
ProxyLimits = RequestLimits


class _NonFinite:
    """Where the body held NaN or Infinity; :func:`_walk` reports its path."""

    def __init__(self, word: str) -> None:
        self.word = word


async def read_json(request: Any, limits: RequestLimits) -> Any:
    """The request's JSON body within ``limits``; a ProxyHTTPError (400/413) otherwise."""
    try:
        raw = await read_capped(request, limits.max_body_bytes)
    except BodyTooLarge as exc:
        raise ProxyHTTPError(413, str(exc)) from None
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_NonFinite)
    except RecursionError:
        raise ProxyHTTPError(400, f"the body is nested deeper than {limits.max_depth}") from None
    except ValueError:  # UnicodeDecodeError included
        raise ProxyHTTPError(400, "the request body is not valid JSON") from None
    _walk(body, "body", 0, limits)
    return body


def _walk(value: Any, path: str, depth: int, limits: RequestLimits) -> None:
    if depth > limits.max_depth:
        raise ProxyHTTPError(400, f"the body is nested deeper than {limits.max_depth} at {path}")
    if isinstance(value, _NonFinite):
        raise ProxyHTTPError(400, f"{path} is {value.word}, which is not a JSON number")
    if isinstance(value, str):
        _check_string(value, path, limits)
    elif isinstance(value, dict):
        for key, item in value.items():
            where = key if path == "body" else f"{path}.{key}"
            _check_string(key, f"a key in {path}", limits)
            _walk(item, where, depth + 1, limits)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, f"{path}[{i}]", depth + 1, limits)


def _check_string(value: str, path: str, limits: RequestLimits) -> None:
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (\ud800): no answer could echo it
            raise ProxyHTTPError(
                400, f"{_printable(path)} holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF)"
            ) from None
    if len(value) > limits.max_string_chars:
        raise ProxyHTTPError(
            400,
            f"{path} has {len(value)} characters; the limit is {limits.max_string_chars}",
        )


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_request_limits(body: Any, api: ApiAdapter, limits: RequestLimits) -> None:
    """Refuse a request whose counts or lengths exceed ``limits`` (types are the parser's).

    The fields are the API's own (``counted_fields``, ``length_fields``, ``samples_field``).
    """
    if not isinstance(body, dict):
        return
    for name, limit_name in api.counted_fields:
        value, limit = body.get(name), getattr(limits, limit_name)
        if isinstance(value, list) and len(value) > limit:
            raise ProxyHTTPError(400, f"'{name}' has {len(value)} entries; the limit is {limit}")
    for name in api.length_fields:
        _cap(body, name, limits.max_new_tokens)
    if api.samples_field is not None:
        _cap(body, api.samples_field, limits.max_n)


def _cap(body: dict[str, Any], name: str, limit: int) -> None:
    value = body.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value > limit:
        raise ProxyHTTPError(400, f"'{name}' is {value}; the limit is {limit}")
