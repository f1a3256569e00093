# SPDX-License-Identifier: Apache-2.0
"""AReaL's proxy worker process: sessions in module globals, generation by its client.

AReaL runs one such worker per rollout server behind its gateway (``proxy_gateway``). Here it is
the proxy app (``server.create_proxy_app``: capacity, sessions, rewards, export) over a registry
whose maps are this module's globals, as AReaL's worker keeps them (``_session_cache``,
``_api_key_to_session``, ``_session_to_api_key``, ``_capacity``, ``_admin_api_key``), with
AReaL's worker rules: a key bound to an open session is refused (409) instead of refreshed,
since refreshing is the gateway's job. Chat completions go to ``_openai_client`` (an
``ArealOpenAI``, set by :func:`setup`) with the session's cache as ``areal_cache``, so the
client records them in the session and streams them back as ``chat.completion.chunk`` events.
"""

from __future__ import annotations

import inspect
import secrets
import threading
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.limits import read_json
from areal_runtime.experimental.openai.proxy.proxy_gateway import (
    CHAT_COMPLETIONS_PATHNAME,
    StartedSession,
)
from areal_runtime.experimental.openai.proxy.request import session_key
from areal_runtime.experimental.openai.proxy.routing import ProxyRoute
from areal_runtime.experimental.openai.proxy.server import create_proxy_app
from areal_runtime.experimental.openai.proxy.sessions import (
    SessionData,
    SessionLimits,
    SessionRegistry,
)

# The worker's state, as AReaL keeps it (its tests swap these).
_engine: Any = None
_openai_client: Any = None
_session_cache: dict[str, SessionData] = {}
_lock = threading.Lock()
_capacity = 0
_last_cleanup_time: float = 0.0
_session_timeout_seconds: int = 3600
# Random until setup() sets it, so an unconfigured worker cannot be driven.
_admin_api_key: str = secrets.token_urlsafe(32)
_api_key_to_session: dict[str, str] = {}
_session_to_api_key: dict[str, str] = {}


class _ModuleGlobal:
    """An attribute stored in this module's globals under ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return globals()[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        globals()[self.name] = value


class _WorkerState(SessionRegistry):
    """The session registry with its maps in the module globals."""

    sessions = _ModuleGlobal("_session_cache")
    key_to_session = _ModuleGlobal("_api_key_to_session")
    session_to_key = _ModuleGlobal("_session_to_api_key")
    capacity = _ModuleGlobal("_capacity")
    admin_api_key = _ModuleGlobal("_admin_api_key")

    def __init__(self) -> None:
        keep = (_session_cache, _api_key_to_session, _session_to_api_key, _admin_api_key)
        super().__init__(
            admin_api_key=keep[3],
            # AReaL's worker: stale after the session timeout, no cap, kept until exported.
            session_limits=SessionLimits(
                max_open_sessions=None, idle_timeout_s=_session_timeout_seconds, ended_ttl_s=None
            ),
        )
        self.sessions, self.key_to_session, self.session_to_key = keep[:3]
        self.capacity = 0
        self.limits = RequestLimits()

    def remove_session(self, session: SessionData) -> None:
        super().remove_session(session)
        release = getattr(_openai_client, "release_cache", None)
        if release is not None:
            release(session.completions)


class _WorkerSessions:
    """Session start and end as AReaL's worker does them (no refresh: the gateway's job)."""

    def __init__(self, state: _WorkerState) -> None:
        self.state = state

    async def start_session(self, task_id: Any, api_key: Any = None) -> StartedSession:
        if api_key is not None and not isinstance(api_key, str):
            raise ProxyHTTPError(400, f"api_key must be a string or null, got {api_key!r}")
        session = self.state.start_session(task_id, api_key=api_key or None)
        return StartedSession(session.api_key, session.session_id, "local", session)

    def end_session(self, session: SessionData) -> int:
        count = len(session.completions)
        self.state.end_session(session)
        return count

    async def wait_for_session(self, worker_addr: str, task_id: Any = None) -> Any:
        raise ProxyHTTPError(404, "a proxy worker has no wait_for_session: ask its gateway")


_state = _WorkerState()


def _client_kwargs(create_fn: Any, body: dict[str, Any]) -> dict[str, Any]:
    """The request fields ``create_fn`` takes (all when it takes ``**kwargs``), without
    ``model`` (the worker serves one) and ``areal_cache`` (the worker sets it)."""
    params = inspect.signature(create_fn).parameters
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {
        k: v
        for k, v in body.items()
        if k not in ("model", "areal_cache", "stream") and (open_ended or k in params)
    }
    kwargs.setdefault("temperature", 1.0)  # AReaL's defaults for a request without them
    kwargs.setdefault("top_p", 1.0)
    return kwargs


async def _sse(chunks: Any) -> AsyncIterator[str]:
    try:
        async for chunk in chunks:
            yield f"data: {chunk.model_dump_json()}\n\n"
        yield "data: [DONE]\n\n"
    finally:
        close = getattr(chunks, "aclose", None) or getattr(chunks, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result


async def chat_completions(request: Request) -> Response:
    """``/chat/completions``: the session's request, answered by ``_openai_client``."""
    session = _state.session_for(session_key(request.headers))
    body = await read_json(request, _state.limits)
    if not isinstance(body, dict):
        raise ProxyHTTPError(400, "the request body must be a JSON object")
    if _openai_client is None:
        raise ProxyHTTPError(500, "Proxy server not initialized: call setup(engine, tokenizer)")
    if session.is_completed:
        raise ProxyHTTPError(410, f"Session {session.session_id} already ended")
    create = _openai_client.chat.completions.create
    kwargs = _client_kwargs(create, body)
    stream = body.get("stream") is True
    if stream:
        kwargs["stream"] = True
    try:
        result = await create(areal_cache=session.completions, **kwargs)
    except ProxyHTTPError:
        raise
    except Exception as exc:  # the client's own status (an openai.APIStatusError) if it has one
        status = getattr(exc, "status_code", None)
        raise ProxyHTTPError(
            status if isinstance(status, int) else 500, f"{type(exc).__name__}: {exc}"
        ) from None
    if stream:
        return StreamingResponse(
            _sse(result),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return JSONResponse(result.model_dump(mode="json", exclude_none=True))


async def health(request: Request) -> dict[str, Any]:
    return {"status": "ok", "initialized": _openai_client is not None}


app = create_proxy_app(
    _state,  # type: ignore[arg-type]
    _WorkerSessions(_state),  # type: ignore[arg-type]
    api_routes=[
        ProxyRoute(f"/{CHAT_COMPLETIONS_PATHNAME}", chat_completions, methods=["POST"]),
        ProxyRoute(f"/v1/{CHAT_COMPLETIONS_PATHNAME}", chat_completions, methods=["POST"]),
        ProxyRoute("/health", health, methods=["GET"]),
    ],
)


def setup(engine: Any, tokenizer: Any, admin_api_key: str, **client_kwargs: Any) -> None:
    """Serve ``engine`` from this worker: its ``ArealOpenAI`` client and admin key (what
    AReaL's worker does on ``/call initialize``)."""
    global _engine, _openai_client, _admin_api_key
    from areal_runtime.experimental.openai.client import ArealOpenAI

    _engine = engine
    _openai_client = ArealOpenAI(engine=engine, tokenizer=tokenizer, **client_kwargs)
    _admin_api_key = admin_api_key
