# SPDX-License-Identifier: Apache-2.0
"""One compact line per proxy request, so a person sees what an agent sends and gets.

An ASGI wrapper around the proxy app: it reads the request body the proxy reads (a copy, the
app still gets every byte), the status and the response body, and prints e.g.::

    13:02:11 POST /v1/chat/completions 200 0.41s serve-0 msgs=3 tools=6 stream user:"What is 2+3?" -> 58+7 tok
    13:02:12 POST /v1/chat/completions 400 0.00s serve-0 msgs=1 error: 'reasoning' is not supported...
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_CAPTURE_BYTES = 1 << 20  # enough for any error body and the ids of a reply
SNIPPET_CHARS = 48
ERROR_CHARS = 160


class RequestLog:
    """ASGI middleware: ``RequestLog(app, state, print_line)``; ``state`` is the ``ProxyState``.

    With ``record``, each request is also passed whole to it (``request_record``), for a
    person who needs to see every field an agent sends.
    """

    def __init__(
        self,
        app: Any,
        state: Any,
        emit: Callable[[str], None],
        record: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.app = app
        self.state = state
        self.emit = emit
        self.record = record

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        request_body = bytearray()
        response_body = bytearray()
        status = 0

        async def logged_receive() -> dict:
            message = await receive()
            if message.get("type") == "http.request" and len(request_body) < MAX_CAPTURE_BYTES:
                request_body.extend(message.get("body", b""))
            return message

        async def logged_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and len(response_body) < MAX_CAPTURE_BYTES:
                response_body.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, logged_receive, logged_send)
        finally:
            auth = _header(scope, b"authorization") or _header(scope, b"x-api-key")
            seconds = time.monotonic() - started
            request, response = bytes(request_body), bytes(response_body)
            if self.record is not None:  # first, so the file has it once the line is shown
                self.record(self.request_record(scope, auth, request, status, response, seconds))
            self.emit(self.line(scope, auth, request, status, response, seconds))

    def line(
        self,
        scope: dict,
        auth: str | None,
        request: bytes,
        status: int,
        response: bytes,
        seconds: float,
    ) -> str:
        """The log line for one finished request."""
        session = self._session(auth)
        parts = [
            time.strftime("%H:%M:%S"),
            scope.get("method", "?"),
            scope.get("path", "?"),
            str(status or "-"),
            f"{seconds:.2f}s",
            session.session_id if session is not None else "-",
        ]
        parts += describe_request(request)
        if status >= 400 or not status:
            parts.append("error: " + _shorten(error_message(response), ERROR_CHARS))
        elif session is not None:
            tokens = _token_counts(session, response)
            if tokens is not None:
                parts.append(f"-> {tokens[0]}+{tokens[1]} tok")
        return " ".join(parts)

    def request_record(
        self,
        scope: dict,
        auth: str | None,
        request: bytes,
        status: int,
        response: bytes,
        seconds: float,
    ) -> dict[str, Any]:
        """The whole request as JSON: body, status, and the error message when refused."""
        session = self._session(auth)
        try:
            body: Any = json.loads(request) if request else None
        except (ValueError, UnicodeDecodeError):
            body = request.decode("utf-8", "replace")
        return {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "method": scope.get("method"),
            "path": scope.get("path"),
            "status": status,
            "seconds": round(seconds, 4),
            "session": session.session_id if session is not None else None,
            "request": body,
            "error": error_message(response) if status >= 400 or not status else None,
        }

    def _session(self, auth: str | None) -> Any:
        if not auth:
            return None
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else auth
        try:
            return self.state.session_for(key)
        except Exception:  # an unknown key: the proxy answers 401 and the line says so
            return None


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


def describe_request(body: bytes) -> list[str]:
    """``msgs=N tools=N stream role:"last message"`` for a chat, Responses or Messages body."""
    try:
        data = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return ["(body is not JSON)"] if body else []
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


def error_message(body: bytes) -> str:
    """The message of an OpenAI- or Anthropic-shaped error body, else the body's text."""
    try:
        data = json.loads(body)
        return str(data["error"]["message"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return body.decode("utf-8", "replace").strip() or "(no body)"


def _token_counts(session: Any, response: bytes) -> tuple[int, int] | None:
    """Prompt and completion tokens of the completion whose id the response carries."""
    text = response.decode("utf-8", "replace")
    cache = session.cache
    for cid in reversed(list(cache.ids())):
        if cid in text:
            model_response = cache[cid].model_response
            if model_response is not None:
                return model_response.input_len, model_response.output_len
    return None


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
