# SPDX-License-Identifier: Apache-2.0
"""AReaL's proxy gateway: session start, refresh and end, and online episodes, in one place.

:class:`SessionGateway` holds AReaL's gateway rules over a *backend* that actually starts and
ends sessions: the proxy's own registry (the proxy app, where gateway and worker are one app:
``AgentProxy``, ``areal-devkit serve``, an online trainer), or proxy workers reached over HTTP
(:func:`create_proxy_gateway_app`, AReaL's separate gateway process, which routes each session
key to the worker holding its session). The rules:

- ``/rl/start_session`` with the ``api_key`` of a session the gateway routes *refreshes* it: the
  old session is ended (its unset rewards count 0 at export), handed to whoever waits for it
  (an online training episode, or ``serve``'s trajectory file), and a new session is bound to
  the same key, so a client configured once with one key goes on from episode to episode. A key
  the gateway issued whose session already ended is reused; an unknown key is replaced by a new
  one (AReaL strips it). The admin key is never a session key (a 400).
- ``/internal/wait_for_session`` (an online episode) registers as ready and blocks until an
  outside session bound to it ends (``/rl/end_session``) or is refreshed. A refresh waits up to
  ``refresh_timeout`` for a ready episode when ``refresh_waits`` (AReaL's gateway), then answers
  429. On an online trainer's gateway (``online=True``) a new session waits too: that closes the
  race of a client that starts before the first episodes registered. Elsewhere a session takes
  a waiting episode if there is one and otherwise starts at once.
- Issued keys are remembered in an LRU pool of ``key_pool_size``; an evicted key's session is
  ended and its episode told so.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.request import MODEL_NAME
from areal_runtime.experimental.openai.proxy.sessions import (
    ADMIN_KEY_REFUSED,
    DEFAULT_ADMIN_API_KEY,
)

logger = logging.getLogger("areal_runtime.proxy_gateway")

DEFAULT_REFRESH_TIMEOUT_S = 120.0  # AReaL's gateway default
_DEFAULT_WAIT_TIMEOUT = 3600.0  # how long an online episode waits for an outside session
KEY_POOL_SIZE = 4096  # issued keys remembered for reuse (AReaL's key_pool_size)
_FORWARD_TIMEOUT_S = 120.0  # a gateway's request to a worker

# AReaL's paths, without the leading slash.
RL_START_SESSION_PATHNAME = "rl/start_session"
RL_END_SESSION_PATHNAME = "rl/end_session"
RL_SET_REWARD_PATHNAME = "rl/set_reward"
CHAT_COMPLETIONS_PATHNAME = "chat/completions"
RESPONSES_PATHNAME = "responses"
ANTHROPIC_MESSAGES_PATHNAME = "v1/messages"
INTERNAL_WAIT_FOR_SESSION_PATHNAME = "internal/wait_for_session"


@dataclass(frozen=True)
class CompletedSessionInfo:
    """An outside session that ended: what an online episode exports (AReaL's fields)."""

    session_api_key: str
    session_id: str
    worker_addr: str


@dataclass
class _ReadyWorkerEntry:
    """An online episode waiting for an outside session on ``worker_addr``; ``task_id`` is the
    episode's, so the proxy records the session's completions under it."""

    worker_addr: str
    future: asyncio.Future
    task_id: Any = None


@dataclass
class _SessionRoute:
    """Where a session key's session lives, and the episode waiting for it to end (if any)."""

    worker_addr: str
    session_id: str
    pending_future: asyncio.Future | None = None


@dataclass
class StartedSession:
    """A session a backend started; ``session`` is the object itself when it is in-process."""

    api_key: str
    session_id: str
    worker_addr: str
    session: Any = None


class GatewayBackend(Protocol):
    """What starts and ends sessions for a :class:`SessionGateway`."""

    admin_api_key: str

    async def start(self, worker_addr: str | None, body: dict[str, Any]) -> StartedSession:
        """Start a session (on ``worker_addr``, or any worker); ProxyHTTPError if refused."""
        ...

    async def end(self, route: _SessionRoute, api_key: str) -> tuple[int, Any]:
        """End the routed session; its completion count and the session if in-process."""
        ...


class LocalBackend:
    """The proxy's own session registry: gateway and worker are the same app."""

    worker_addr = "local"

    def __init__(self, state: Any) -> None:
        self.state = state

    @property
    def admin_api_key(self) -> str:
        return self.state.admin_api_key

    async def start(self, worker_addr: str | None, body: dict[str, Any]) -> StartedSession:
        session = self.state.start_session(body.get("task_id"), api_key=body.get("api_key"))
        return StartedSession(session.api_key, session.session_id, self.worker_addr, session)

    async def end(self, route: _SessionRoute, api_key: str) -> tuple[int, Any]:
        session = self.state.sessions.get(route.session_id)
        if session is None:  # dropped meanwhile: nothing to end
            return 0, None
        self.state.end_session(session)
        return len(session.completions), session


class SessionGateway:
    """Session start, refresh and end with AReaL's gateway rules, over a backend."""

    def __init__(
        self,
        backend: Any,
        *,
        refresh_timeout_s: float = DEFAULT_REFRESH_TIMEOUT_S,
        wait_timeout_s: float | None = None,
        key_pool_size: int = KEY_POOL_SIZE,
        refresh_waits: bool = False,
    ) -> None:
        # A proxy's registry (anything with start_session) is served in-process.
        self.backend = backend if hasattr(backend, "end") else LocalBackend(backend)
        self.refresh_timeout_s = refresh_timeout_s
        self.wait_timeout_s = wait_timeout_s  # None: the module's _DEFAULT_WAIT_TIMEOUT
        self.key_pool_size = key_pool_size
        self.refresh_waits = refresh_waits
        self.online = False  # an online trainer's gateway: every session serves an episode
        # Called with each in-process session that ends (end_session or refresh).
        self.on_session_end: list[Callable[[Any], None]] = []
        self.routes: dict[str, _SessionRoute] = {}
        self._ready: deque[_ReadyWorkerEntry] = deque()
        self._arrived: asyncio.Event | None = None
        self._known_keys: OrderedDict[str, None] = OrderedDict()
        self._refreshing: set[str] = set()
        self._background: set[asyncio.Task] = set()
        self._closed: str | None = None  # why no more sessions are served (the run ended)

    @property
    def waiting_episodes(self) -> int:
        return sum(1 for entry in self._ready if not entry.future.done())

    async def start_session(
        self, task_id: Any, api_key: Any = None, body: dict[str, Any] | None = None
    ) -> StartedSession:
        """A new session; with the key of a routed one, that one is ended first (a refresh)."""
        if api_key is not None and not isinstance(api_key, str):
            raise ProxyHTTPError(400, f"api_key must be a string or null, got {api_key!r}")
        api_key = api_key or None
        body = {**(body or {}), "task_id": task_id}
        if api_key is not None and api_key == self.backend.admin_api_key:
            raise ProxyHTTPError(400, ADMIN_KEY_REFUSED)
        if api_key is not None and api_key in self._refreshing:
            raise ProxyHTTPError(429, "A refresh is already in progress for this key.")
        if api_key is not None and api_key in self._known_keys and api_key in self.routes:
            return await self._refresh(api_key, body)
        if api_key is not None and api_key in self._known_keys:
            body["api_key"] = api_key  # issued here and ended: the worker binds it again
        else:
            body.pop("api_key", None)  # unknown: the worker makes a new one
        ready = self._take_ready()
        if ready is None and self.online:
            ready = await self._wait_ready()
        return await self._start_on(ready, body, api_key)

    async def _refresh(self, api_key: str, body: dict[str, Any]) -> StartedSession:
        self._refreshing.add(api_key)
        try:
            old = self.routes.pop(api_key)
            await self._end(api_key, old)
            logger.info("refresh: session %s ended, key rebound", old.session_id)
            ready = self._take_ready()
            if ready is None and (self.online or self.refresh_waits):
                try:
                    ready = await self._wait_ready()
                except ProxyHTTPError:
                    self._known_keys.pop(api_key, None)
                    raise
            body["api_key"] = api_key
            return await self._start_on(ready, body, api_key)
        finally:
            self._refreshing.discard(api_key)

    async def _start_on(
        self, ready: _ReadyWorkerEntry | None, body: dict[str, Any], api_key: str | None
    ) -> StartedSession:
        if self._closed is not None and ready is None and self.online:
            raise ProxyHTTPError(503, self._closed)
        try:
            started = await self.backend.start(ready.worker_addr if ready else None, body)
        except ProxyHTTPError as exc:
            if ready is not None:
                if exc.status == 429:
                    self._ready.appendleft(ready)  # still waiting: the next session takes it
                else:  # the worker refused it: the episode must not wait an hour
                    ready.future.cancel()
            if api_key is not None:
                self._known_keys.pop(api_key, None)
            raise
        except BaseException:
            if ready is not None:
                self._ready.appendleft(ready)
            raise
        if ready is not None and ready.task_id is not None and started.session is not None:
            started.session.task_id = ready.task_id  # the engine records it under the episode
        self.routes[started.api_key] = _SessionRoute(
            started.worker_addr, started.session_id, ready.future if ready else None
        )
        self._track_key(started.api_key)
        return started

    def _track_key(self, api_key: str) -> None:
        """Remember ``api_key``; past the pool size the oldest key's session is ended."""
        self._known_keys[api_key] = None
        self._known_keys.move_to_end(api_key)
        while len(self._known_keys) > self.key_pool_size:
            evicted, _ = self._known_keys.popitem(last=False)
            route = self.routes.pop(evicted, None)
            if route is None:
                continue
            logger.warning("key pool full: session %s of an evicted key ended", route.session_id)
            _settle(route.pending_future, error=f"Session route evicted from key pool: {evicted}")
            task = asyncio.ensure_future(self._end_quietly(evicted, route))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _end_quietly(self, api_key: str, route: _SessionRoute) -> None:
        with contextlib.suppress(Exception):
            await self.backend.end(route, api_key)

    async def _end(self, api_key: str, route: _SessionRoute) -> int:
        """End a routed session on its backend and hand it to the episode waiting for it."""
        try:
            count, session = await self.backend.end(route, api_key)
        except ProxyHTTPError as exc:
            _settle(route.pending_future, error=f"end_session failed (status {exc.status})")
            raise
        self.ended(api_key, route, session)
        return count

    def ended(self, api_key: str, route: _SessionRoute, session: Any = None) -> None:
        """``route``'s session ended: resolve its episode and run the end hooks."""
        _settle(
            route.pending_future,
            CompletedSessionInfo(api_key, route.session_id, route.worker_addr),
        )
        if session is not None:
            for hook in self.on_session_end:
                hook(session)

    def end_session(self, session: Any) -> int:
        """End an in-process ``session`` and hand it to the episode waiting for it."""
        count = len(session.completions)
        self.backend.state.end_session(session)
        route = self.routes.get(session.api_key)
        if route is not None and route.session_id == session.session_id:
            del self.routes[session.api_key]
        else:
            route = _SessionRoute(self.backend.worker_addr, session.session_id)
        self.ended(session.api_key, route, session)
        return count

    async def wait_for_session(
        self, worker_addr: str, task_id: Any = None, timeout: float | None = None
    ) -> CompletedSessionInfo:
        """Block an online episode until an outside session bound to it ends.

        408 when none ends within the timeout, 503 when the session assignment was cancelled
        (the worker refused it) or the gateway closed, 500 when the session failed.
        """
        if timeout is None:
            timeout = (
                self.wait_timeout_s if self.wait_timeout_s is not None else _DEFAULT_WAIT_TIMEOUT
            )
        future = asyncio.get_running_loop().create_future()
        entry = _ReadyWorkerEntry(worker_addr, future, task_id)
        self._ready.append(entry)
        self._event().set()
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=timeout)
        except TimeoutError:
            future.cancel()  # a stale entry: the next session skips it
            raise ProxyHTTPError(
                408, f"Timeout waiting for session completion ({timeout:g} s)"
            ) from None
        except asyncio.CancelledError:
            if not future.cancelled():
                future.cancel()  # the episode itself was cancelled: its session serves nobody
                raise
            raise ProxyHTTPError(503, "Session assignment was cancelled") from None
        except RuntimeError as exc:
            raise ProxyHTTPError(500, f"Session failed: {exc}") from None
        finally:
            if entry in self._ready:
                self._ready.remove(entry)

    def open(self) -> None:
        """Serve sessions again after :meth:`close` (a proxy entered a second time)."""
        self._closed = None

    def close(self, reason: str = "the proxy is shutting down") -> None:
        """Answer every waiting episode and waiting session start with a 503, so the server
        can stop at once."""
        self._closed = reason
        self._event().set()
        futures = [e.future for e in self._ready]
        futures += [r.pending_future for r in self.routes.values() if r.pending_future]
        for future in futures:
            _settle(future, error=ProxyHTTPError(503, reason))
        self._ready.clear()

    def _take_ready(self) -> _ReadyWorkerEntry | None:
        while self._ready:
            entry = self._ready.popleft()
            if not entry.future.done():
                return entry
        return None

    async def _wait_ready(self) -> _ReadyWorkerEntry:
        """The next episode that registers within ``refresh_timeout_s``; 429 if none does."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.refresh_timeout_s
        ready = self._take_ready()
        while ready is None:
            if self._closed is not None:
                raise ProxyHTTPError(503, self._closed)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ProxyHTTPError(
                    429,
                    f"Refresh timed out ({self.refresh_timeout_s:g} s) waiting for the trainer "
                    "to take another episode (it is at its staleness limit or still training); "
                    "a refreshed session was ended and handed on. Retry to start a new session",
                )
            event = self._event()
            event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=remaining)
            ready = self._take_ready()
        return ready

    def _event(self) -> asyncio.Event:
        if self._arrived is None:
            self._arrived = asyncio.Event()
        return self._arrived


def _settle(future: asyncio.Future | None, result: Any = None, *, error: Any = None) -> None:
    """Resolve (or fail, with a RuntimeError for a message) an episode's future once."""
    if future is None or future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(RuntimeError(error) if isinstance(error, str) else error)


def models_list() -> dict[str, Any]:
    """``GET /v1/models``: the one model the proxy serves (replies echo the requested name)."""
    return {
        "object": "list",
        "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "areal-runtime"}],
    }


async def completed_session(gateway: SessionGateway, body: Any) -> dict[str, Any]:
    """``/internal/wait_for_session``: ``{worker_addr, task_id?}`` -> the session that ended."""
    if not isinstance(body, dict) or not isinstance(body.get("worker_addr"), str):
        raise ProxyHTTPError(400, "body must be {worker_addr: str, task_id?: any}")
    info = await gateway.wait_for_session(body["worker_addr"], body.get("task_id"))
    return {
        "session_api_key": info.session_api_key,
        "session_id": info.session_id,
        "worker_addr": info.worker_addr,
    }


# --- AReaL's gateway process: the rules above in front of workers reached over HTTP ----------


def _extract_bearer_token(request: Any) -> str | None:
    """The token of ``Authorization: Bearer <token>``, else None."""
    auth = request.headers.get("authorization", "")
    return auth[7:] if auth.lower().startswith("bearer ") else None


def _forwarding_headers(raw_headers: dict[str, str]) -> dict[str, str]:
    """The headers a worker needs (the key and the body type); hop-by-hop ones stay behind."""
    return {k: v for k, v in raw_headers.items() if k.lower() in ("authorization", "content-type")}


class HttpWorkers:
    """Proxy workers behind a gateway app, reached with the app's aiohttp session."""

    def __init__(self, app: Starlette, proxy_addrs: list[str], admin_api_key: str) -> None:
        self.app = app
        self.proxy_addrs = list(proxy_addrs)
        self.admin_api_key = admin_api_key
        self._next = 0  # round-robin position

    async def forward(
        self, worker_addr: str, path: str, body: bytes, headers: dict[str, str]
    ) -> Response:
        """POST ``body`` to ``worker_addr/path``; the worker's answer as it is (502 if none)."""
        import aiohttp

        session = self.app.state.http_session
        try:
            async with session.post(
                f"{worker_addr}/{path}",
                data=body,
                headers=_forwarding_headers(headers),
                timeout=aiohttp.ClientTimeout(total=_FORWARD_TIMEOUT_S),
            ) as resp:
                content = await resp.read()
                return Response(content, status_code=resp.status, media_type=resp.content_type)
        except (TimeoutError, aiohttp.ClientError, RuntimeError) as exc:
            logger.error("cannot forward to %s: %s", worker_addr, exc)
            return Response(b"Backend unreachable", status_code=502)

    async def start(self, worker_addr: str | None, body: dict[str, Any]) -> StartedSession:
        payload = json.dumps(body).encode()
        headers = {
            "authorization": f"Bearer {self.admin_api_key}",
            "content-type": "application/json",
        }
        candidates = [worker_addr] if worker_addr else self._round_robin()
        resp: Response | None = None
        for addr in candidates:
            resp = await self.forward(addr, RL_START_SESSION_PATHNAME, payload, headers)
            if resp.status_code == 200:
                data = json.loads(resp.body)
                return StartedSession(data["api_key"], data["session_id"], addr)
            if resp.status_code != 429:
                break  # not a capacity problem: the next worker would refuse it too
        if resp is None:
            raise ProxyHTTPError(503, "the gateway has no proxy workers")
        raise ProxyHTTPError(resp.status_code, _text(resp.body) or "start_session refused")

    def _round_robin(self) -> list[str]:
        n = len(self.proxy_addrs)
        start, self._next = self._next, self._next + n
        return [self.proxy_addrs[(start + i) % n] for i in range(n)]

    async def end(self, route: _SessionRoute, api_key: str) -> tuple[int, Any]:
        headers = {"authorization": f"Bearer {api_key}", "content-type": "application/json"}
        resp = await self.forward(route.worker_addr, RL_END_SESSION_PATHNAME, b"{}", headers)
        if resp.status_code >= 400:
            raise ProxyHTTPError(resp.status_code, _text(resp.body) or "end_session failed")
        try:
            return int(json.loads(resp.body).get("interaction_count", -1)), None
        except (ValueError, AttributeError, TypeError):
            return -1, None


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")[:500]


def _detail(status: int, message: str) -> JSONResponse:
    """The gateway's error shape (FastAPI's, as AReaL's gateway answers)."""
    return JSONResponse({"detail": message}, status_code=status)


def create_proxy_gateway_app(
    proxy_addrs: list[str],
    admin_api_key: str = DEFAULT_ADMIN_API_KEY,
    refresh_timeout: float = DEFAULT_REFRESH_TIMEOUT_S,
    key_pool_size: int = KEY_POOL_SIZE,
) -> Starlette:
    """AReaL's gateway app: one address in front of ``proxy_addrs``, sessions pinned to the
    worker that started them, with the :class:`SessionGateway` rules (refresh waits)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            app.state.http_session = session
            yield

    app = Starlette(lifespan=lifespan)
    workers = HttpWorkers(app, proxy_addrs, admin_api_key)
    gateway = SessionGateway(
        workers,
        refresh_timeout_s=refresh_timeout,
        key_pool_size=key_pool_size,
        refresh_waits=True,
    )
    app.state.gateway = gateway

    def is_admin(request: Request) -> bool:
        return hmac.compare_digest(
            (_extract_bearer_token(request) or "").encode(), admin_api_key.encode()
        )

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "workers": len(proxy_addrs)})

    async def start_session(request: Request) -> Response:
        if not is_admin(request):
            return _detail(401, "Unauthorized")
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return _detail(400, "the body must be JSON")
        if not isinstance(body, dict):
            return _detail(400, "the body must be a JSON object")
        try:
            started = await gateway.start_session(body.get("task_id"), body.get("api_key"), body)
        except ProxyHTTPError as exc:
            return _detail(exc.status, str(exc))
        return JSONResponse({"session_id": started.session_id, "api_key": started.api_key})

    def routed(path: str) -> Callable[[Request], Any]:
        async def forward(request: Request) -> Response:
            token = _extract_bearer_token(request)
            route = gateway.routes.get(token) if token else None
            if route is None:
                return Response(b"Invalid session key", status_code=401)
            body = await request.body()
            return await workers.forward(route.worker_addr, path, body, dict(request.headers))

        return forward

    async def end_session(request: Request) -> Response:
        token = _extract_bearer_token(request)
        route = gateway.routes.get(token) if token else None
        if token is None or route is None:
            return Response(b"Invalid session key", status_code=401)
        resp = await workers.forward(
            route.worker_addr, RL_END_SESSION_PATHNAME, await request.body(), dict(request.headers)
        )
        gateway.routes.pop(token, None)  # the session is over whatever the worker said
        if resp.status_code < 400:
            gateway.ended(token, route)
        else:
            _settle(route.pending_future, error=f"end_session failed (status {resp.status_code})")
        return resp

    async def wait_for_session(request: Request) -> Response:
        if not is_admin(request):
            return Response(b"Unauthorized", status_code=401)
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("worker_addr"), str):
            return _detail(422, "body must be {worker_addr: str}")
        try:
            info = await gateway.wait_for_session(
                body["worker_addr"], body.get("task_id"), timeout=_DEFAULT_WAIT_TIMEOUT
            )
        except ProxyHTTPError as exc:
            return Response(str(exc).encode(), status_code=exc.status)
        return JSONResponse(
            {
                "session_api_key": info.session_api_key,
                "session_id": info.session_id,
                "worker_addr": info.worker_addr,
            }
        )

    app.router.routes.extend(
        [
            Route("/health", health, methods=["GET"]),
            Route(f"/{RL_START_SESSION_PATHNAME}", start_session, methods=["POST"]),
            Route(f"/{RL_END_SESSION_PATHNAME}", end_session, methods=["POST"]),
            Route(f"/{INTERNAL_WAIT_FOR_SESSION_PATHNAME}", wait_for_session, methods=["POST"]),
        ]
        + [
            Route(f"/{path}", routed(path), methods=["POST"])
            for path in (
                CHAT_COMPLETIONS_PATHNAME,
                RESPONSES_PATHNAME,
                ANTHROPIC_MESSAGES_PATHNAME,
                RL_SET_REWARD_PATHNAME,
            )
        ]
    )
    return app
