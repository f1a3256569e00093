# SPDX-License-Identifier: Apache-2.0
"""AReaL's proxy-gateway semantics (online mode) over one proxy's sessions.

AReaL runs a gateway in front of its proxy workers; on one machine the gateway and the worker
are the same app, so this keeps what the gateway decides and leaves out the forwarding:

- ``/rl/start_session`` with the ``api_key`` of an open session *refreshes* it: the old session
  is ended (its unset rewards count 0 at export), handed to whoever waits for it (an online
  training episode, or ``serve``'s trajectory file), and a new session is bound to the same
  key, so a client configured once with one key goes on from episode to episode. A key this
  proxy issued whose session already ended is reused; an unknown key is replaced by a new one
  (AReaL's gateway strips it). The admin key is never a session key.
- ``/internal/wait_for_session`` (an online episode) registers as ready and blocks until an
  outside session bound to it ends (``/rl/end_session``) or is refreshed. On an online
  trainer's gateway (``online=True``) every session is bound to a waiting episode: a start or
  refresh waits up to ``refresh_timeout_s`` for one (the trainer takes a new episode when its
  staleness control allows), then answers 429. AReaL's gateway waits on a refresh only and
  answers a new session at once; waiting on both closes the race of a client that starts
  before the first episodes registered. Elsewhere (``serve``, agents' own proxies) a session
  takes a waiting episode if there is one and otherwise starts at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from areal_runtime.errors import ProxyHTTPError

logger = logging.getLogger("areal_runtime.proxy_gateway")

DEFAULT_REFRESH_TIMEOUT_S = 120.0  # AReaL's gateway default
DEFAULT_WAIT_TIMEOUT_S = 3600.0  # how long an online episode waits for an outside session
KEY_POOL_SIZE = 4096  # issued keys remembered for reuse (AReaL's key_pool_size)


@dataclass(frozen=True)
class CompletedSessionInfo:
    """An outside session that ended: what an online episode exports (AReaL's fields)."""

    session_api_key: str
    session_id: str
    worker_addr: str


@dataclass
class _ReadyEpisode:
    """An online episode waiting for an outside session (AReaL's ready worker entry)."""

    worker_addr: str
    task_id: Any
    future: asyncio.Future


class SessionGateway:
    """Session start, refresh and end with AReaL's gateway rules, over a proxy's registry."""

    def __init__(
        self,
        state: Any,
        *,
        refresh_timeout_s: float = DEFAULT_REFRESH_TIMEOUT_S,
        wait_timeout_s: float = DEFAULT_WAIT_TIMEOUT_S,
    ) -> None:
        self.state = state
        self.refresh_timeout_s = refresh_timeout_s
        self.online = False  # an online trainer's gateway: every session serves an episode
        self.wait_timeout_s = wait_timeout_s
        # Called with each session that ends (end_session or refresh), after it is handed on.
        self.on_session_end: list[Callable[[Any], None]] = []
        self._ready: deque[_ReadyEpisode] = deque()
        self._arrived: asyncio.Event | None = None
        self._pending: dict[str, _ReadyEpisode] = {}  # session id -> the episode it serves
        self._issued: OrderedDict[str, None] = OrderedDict()
        self._refreshing: set[str] = set()
        self._closed: str | None = None  # why no more sessions are served (the run ended)

    @property
    def waiting_episodes(self) -> int:
        return sum(1 for entry in self._ready if not entry.future.done())

    async def start_session(self, task_id: Any, api_key: Any = None) -> Any:
        """A new session; with the key of an open one, that one is ended first (a refresh)."""
        if api_key is not None and not isinstance(api_key, str):
            raise ProxyHTTPError(400, f"api_key must be a string or null, got {api_key!r}")
        if api_key == self.state.admin_api_key:
            raise ProxyHTTPError(400, "the admin key cannot be a session key; omit api_key")
        if api_key and api_key in self._refreshing:
            raise ProxyHTTPError(429, "a refresh is already in progress for this key; retry")
        current = self.state.session_by_key(api_key) if api_key else None
        if current is not None and not current.finished:
            self._refreshing.add(api_key)
            try:
                self.end_session(current)
                logger.info("refresh: session %s ended, key rebound", current.session_id)
                return self._start(task_id, api_key, await self._next_ready())
            finally:
                self._refreshing.discard(api_key)
        reuse = api_key if api_key and (current is not None or api_key in self._issued) else None
        return self._start(task_id, reuse, await self._next_ready())

    def end_session(self, session: Any) -> int:
        """End ``session``, hand it to the episode waiting for it; its completion count."""
        count = len(session.cache)
        self.state.end_session(session)
        entry = self._pending.pop(session.session_id, None)
        if entry is not None and not entry.future.done():
            entry.future.set_result(
                CompletedSessionInfo(session.api_key, session.session_id, entry.worker_addr)
            )
        for hook in self.on_session_end:
            hook(session)
        return count

    async def wait_for_session(self, worker_addr: str, task_id: Any = None) -> Any:
        """Block an online episode until an outside session bound to it ends."""
        future = asyncio.get_running_loop().create_future()
        entry = _ReadyEpisode(worker_addr, task_id, future)
        self._ready.append(entry)
        self._event().set()
        try:
            return await asyncio.wait_for(future, timeout=self.wait_timeout_s)
        except TimeoutError:
            raise ProxyHTTPError(
                408, f"no outside session ended within {self.wait_timeout_s:g} s"
            ) from None
        finally:
            if entry in self._ready:
                self._ready.remove(entry)
            if future.cancelled():  # the episode was cancelled: its session serves nobody
                for sid, pending in list(self._pending.items()):
                    if pending is entry:
                        del self._pending[sid]

    def open(self) -> None:
        """Serve sessions again after :meth:`close` (a proxy entered a second time)."""
        self._closed = None

    def close(self, reason: str = "the proxy is shutting down") -> None:
        """Answer every waiting episode and waiting session start with a 503, so the server
        can stop at once."""
        self._closed = reason
        self._event().set()
        for entry in [*self._ready, *self._pending.values()]:
            if not entry.future.done():
                entry.future.set_exception(ProxyHTTPError(503, reason))
        self._ready.clear()
        self._pending.clear()

    def _start(self, task_id: Any, api_key: str | None, ready: _ReadyEpisode | None) -> Any:
        try:
            session = self.state.start_session(task_id, api_key=api_key)
        except BaseException:
            if ready is not None:
                self._ready.appendleft(ready)  # still waiting: the next session takes it
            raise
        if ready is not None:
            self._pending[session.session_id] = ready
            if ready.task_id is not None:
                session.task_id = ready.task_id  # the engine records it under the episode
        self._issued[session.api_key] = None
        self._issued.move_to_end(session.api_key)
        while len(self._issued) > KEY_POOL_SIZE:
            self._issued.popitem(last=False)
        return session

    def _take_ready(self) -> _ReadyEpisode | None:
        while self._ready:
            entry = self._ready.popleft()
            if not entry.future.done():
                return entry
        return None

    async def _next_ready(self) -> _ReadyEpisode | None:
        ready = self._take_ready()
        if ready is not None or not self.online:
            return ready
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.refresh_timeout_s
        while ready is None:
            if self._closed is not None:
                raise ProxyHTTPError(503, self._closed)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ProxyHTTPError(
                    429,
                    f"timed out ({self.refresh_timeout_s:g} s) waiting for the trainer to take "
                    "another episode (it is at its staleness limit or still training); a "
                    "refreshed session was ended and handed on. Retry to start a new session",
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


def models_list() -> dict[str, Any]:
    """``GET /v1/models``: the one model the proxy serves (replies echo the requested name)."""
    from areal_runtime.experimental.openai.proxy.request import MODEL_NAME

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
