# SPDX-License-Identifier: Apache-2.0
"""One compact line per proxy request, so a person sees what an agent sends and gets.

An ASGI wrapper around the proxy app. It reads only what the proxy itself parsed (the
``ParsedRequest`` the proxy leaves in the request's state: session, JSON body, answer id,
error message) and never parses a body on its own or touches the proxy's sessions, so a hostile
body cannot make it raise and logging cannot change what the proxy does. It prints e.g.::

    13:02:11 POST /v1/chat/completions 200 0.41s ttft=0.12s serve-0 msgs=3 tools=6 stream user:"What is 2+3?" -> 58+7 tok, 48 cached
    13:02:12 POST /v1/chat/completions 400 0.00s serve-0 msgs=1 error: 'reasoning' is not supported...

``ttft`` is the engine's time to the first token (the prefill, mostly) beside the request's
total; ``48 cached`` is how many of the 58 prompt tokens the local engine's prefix cache
supplied (engines that do not say show neither).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from areal_devkit.runtime_facade import cached_tokens

PARSED_STATE_KEY = "proxy_request"  # where the proxy leaves its ParsedRequest in scope["state"]
MAX_RAW_CHARS = 4096  # of a body the proxy refused to parse, kept in the request record
SNIPPET_CHARS = 48
ERROR_CHARS = 160


class RequestLog:
    """ASGI middleware: ``RequestLog(app, print_line)`` around the proxy's app.

    With ``record``, each request is also passed whole to it (``request_record``), for a
    person who needs to see every field an agent sends.
    """

    def __init__(
        self,
        app: Any,
        emit: Callable[[str], None],
        record: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.app = app
        self.emit = emit
        self.record = record

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        state = scope.setdefault("state", {})
        raw = bytearray()  # only for the record of a body the proxy did not parse
        status = 0

        async def logged_receive() -> dict:
            message = await receive()
            if self.record is not None and message.get("type") == "http.request":
                raw.extend(message.get("body", b"")[: MAX_RAW_CHARS - len(raw)])
            return message

        async def logged_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, logged_receive, logged_send)
        finally:
            parsed = state.get(PARSED_STATE_KEY)
            seconds = time.monotonic() - started
            if self.record is not None:  # first, so the file has it once the line is shown
                self.record(request_record(scope, parsed, bytes(raw), status, seconds))
            self.emit(log_line(scope, parsed, status, seconds))


def log_line(scope: dict, parsed: Any, status: int, seconds: float) -> str:
    """The log line for one finished request."""
    session = getattr(parsed, "session", None)
    answered = status < 400 and bool(status)
    response = _response(parsed) if answered else None
    parts = [
        time.strftime("%H:%M:%S"),
        scope.get("method", "?"),
        scope.get("path", "?"),
        str(status or "-"),
        f"{seconds:.2f}s",
    ]
    ttft = getattr(response, "ttft", None)
    if isinstance(ttft, float) and math.isfinite(ttft):
        parts.append(f"ttft={ttft:.2f}s")
    parts.append(session.session_id if session is not None else "-")
    parts += describe_request(getattr(parsed, "body", None))
    if not answered:
        parts.append("error: " + _shorten(_error_of(parsed), ERROR_CHARS))
    elif response is not None:
        tokens = f"-> {response.input_len}+{response.output_len} tok"
        cached = cached_tokens(response)
        parts.append(tokens if cached is None else f"{tokens}, {cached} cached")
    return " ".join(parts)


def request_record(
    scope: dict, parsed: Any, raw: bytes, status: int, seconds: float
) -> dict[str, Any]:
    """The whole request as JSON: body, status, and the error message when refused.

    ``request`` is the body as the proxy parsed it; a body it refused (not JSON, too large,
    too deep) is kept as the head of its text.
    """
    session = getattr(parsed, "session", None)
    body = getattr(parsed, "body", None)
    if body is None and raw:
        body = raw[:MAX_RAW_CHARS].decode("utf-8", "replace")
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "method": scope.get("method"),
        "path": scope.get("path"),
        "status": status,
        "seconds": round(seconds, 4),
        "session": session.session_id if session is not None else None,
        "request": body,
        "error": _error_of(parsed) if status >= 400 or not status else None,
    }


class RequestFile:
    """Appends each request record to a JSONL file, one flushed line each; a context manager."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")

    def __call__(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()

    def __enter__(self) -> RequestFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._file.close()


def describe_request(data: Any) -> list[str]:
    """``msgs=N tools=N stream role:"last message"`` for a parsed chat, Responses or Messages body."""
    if not isinstance(data, dict):
        return []
    messages = data.get("messages", data.get("input"))
    parts = []
    if isinstance(messages, list):
        parts.append(f"msgs={len(messages)}")
    if isinstance(data.get("tools"), list) and data["tools"]:
        parts.append(f"tools={len(data['tools'])}")
    if data.get("stream") is True:
        parts.append("stream")
    last = _last_text(messages)
    if last is not None:
        role, text = last
        parts.append(f"{role}:{json.dumps(_shorten(text, SNIPPET_CHARS), ensure_ascii=False)}")
    return parts


def _last_text(messages: Any) -> tuple[str, str] | None:
    if isinstance(messages, str):
        return "user", messages
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    role = str(last.get("role") or last.get("type") or "?")
    content = last.get("content", last.get("output", ""))
    if isinstance(content, list):  # content parts: keep their text
        content = " ".join(
            str(p.get("text", p.get("content", ""))) for p in content if isinstance(p, dict)
        )
    return role, str(content)


def _error_of(parsed: Any) -> str:
    return getattr(parsed, "error", None) or "(no message)"


def _response(parsed: Any) -> Any:
    """The engine's response behind the answer the proxy gave, if it is still recorded."""
    session, answer_id = getattr(parsed, "session", None), getattr(parsed, "answer_id", None)
    if session is None or answer_id is None:
        return None
    item = session.completions.get(answer_id)
    return None if item is None else item.model_response


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
