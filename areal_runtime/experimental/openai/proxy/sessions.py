# SPDX-License-Identifier: Apache-2.0
"""The proxy's sessions: who may call what, and how many are held for how long.

:class:`SessionRegistry` holds the sessions, their keys and which session owns each
completion id; a session can never touch another's completions, and only the admin key starts
sessions or exports them.

Its state stays bounded.
A session lives from ``/rl/start_session`` to ``/export_trajectories``. A trainer that crashes
in between, or an agent loop that never exports, would otherwise grow the proxy forever (about
40 KB a session with one completion). :class:`SessionLimits` drops a session that ended and was
not exported within ``ended_ttl_s``, or that saw no request for ``idle_timeout_s`` (a request
still generating keeps it alive), and refuses a new one past ``max_open_sessions`` with a 429.
Sessions of ``AgentProxy.session()`` are removed when the episode ends and are never dropped
(an agent may wait long on a tool). Each drop is a warning naming the session and the setting, and the dropped session's key and
id answer with that reason afterwards instead of a bare "unknown".
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.cache import InteractionCache
from areal_runtime.experimental.openai.proxy.request import base_id_of

DEFAULT_ADMIN_API_KEY = "areal-admin-key"
logger = logging.getLogger("areal_runtime.proxy")

_REMEMBERED_DROPS = 4096  # dropped keys and ids whose reason is still reported


@dataclass(frozen=True)
class SessionLimits:
    """Bounds on the proxy's open sessions; ``docs/runtime.md`` ("Sessions") explains them.

    The defaults hold a 1,000-agent cluster run (sessions open at once are about the rollout
    concurrency) with room to spare, and a 64-agent laptop run never comes near them; at
    ~40 KB a session the cap is ~160 MB at worst. ``None`` turns a bound off.
    """

    max_open_sessions: int | None = 4096  # /rl/start_session answers 429 past this
    idle_timeout_s: float | None = 3600.0  # no request for this long: dropped
    ended_ttl_s: float | None = 600.0  # ended but not exported for this long: dropped

    def __post_init__(self) -> None:
        cap = self.max_open_sessions
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError(
                f"SessionLimits.max_open_sessions must be a positive integer or None, got {cap!r}"
            )
        for name in ("idle_timeout_s", "ended_ttl_s"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(
                    f"SessionLimits.{name} must be a positive number of seconds or None, "
                    f"got {value!r}"
                )

    @property
    def sweep_interval_s(self) -> float:
        """How often expired sessions are looked for: a tenth of the shortest bound, <= 1 s."""
        bounds = [b for b in (self.idle_timeout_s, self.ended_ttl_s) if b is not None]
        return min([1.0, *(b / 10 for b in bounds)])


def drop_reason(
    limits: SessionLimits, *, idle_s: float, ended_s: float | None, in_flight: bool
) -> str | None:
    """Why a session should be dropped now, naming the setting; None to keep it."""
    if in_flight:
        return None
    if ended_s is not None and limits.ended_ttl_s is not None and ended_s >= limits.ended_ttl_s:
        return (
            f"ended {ended_s:.0f} s ago and never exported "
            f"(SessionLimits.ended_ttl_s={limits.ended_ttl_s:g})"
        )
    if limits.idle_timeout_s is not None and idle_s >= limits.idle_timeout_s:
        return f"idle for {idle_s:.0f} s (SessionLimits.idle_timeout_s={limits.idle_timeout_s:g})"
    return None


class DropLog:
    """The reasons of recently dropped sessions, by session id and by key; bounded."""

    def __init__(self, size: int = _REMEMBERED_DROPS) -> None:
        self._reasons: OrderedDict[str, str] = OrderedDict()
        self._size = size

    def add(self, session_id: str, api_key: str, reason: str) -> None:
        for name in (session_id, api_key):
            self._reasons[name] = f"session {session_id} was dropped: {reason}"
            self._reasons.move_to_end(name)
        while len(self._reasons) > 2 * self._size:
            self._reasons.popitem(last=False)

    def get(self, name: str | None) -> str | None:
        return None if name is None else self._reasons.get(name)


@dataclass
class Session:
    session_id: str
    api_key: str
    task_id: Any
    cache: InteractionCache = field(default_factory=InteractionCache)
    finished: bool = False
    warnings: list[str] = field(default_factory=list)  # e.g. tool calls that could not be parsed
    last_active: float = 0.0  # the registry's clock at the session's last request
    ended_at: float | None = None
    in_flight: int = 0  # requests generating now: a session busy generating is not idle
    # Held by AgentProxy.session(), which removes it on exit: never dropped by the sweep, so
    # an agent that waits long on a tool keeps its episode.
    managed: bool = False


class SessionRegistry:
    """Sessions by id and by key, the owner of each completion id, and the admin key."""

    def __init__(
        self,
        *,
        admin_api_key: str = DEFAULT_ADMIN_API_KEY,
        session_limits: SessionLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.admin_api_key = admin_api_key
        self.session_limits = session_limits or SessionLimits()
        self.clock = clock
        self._last_sweep = clock()
        self.dropped = DropLog()
        self.sessions: dict[str, Session] = {}
        self._by_key: dict[str, Session] = {}
        self._owner: dict[str, Session] = {}  # base completion id -> its session
        self._counter = itertools.count()
        self.capacity: int | None = None  # None: unlimited; else what /grant_capacity granted

    def start_session(self, task_id: Any = None, *, api_key: str | None = None) -> Session:
        """A new session with a new key, or bound to ``api_key`` (the gateway's refresh/reuse)."""
        self.sweep()
        cap = self.session_limits.max_open_sessions
        if cap is not None and len(self.sessions) >= cap:
            self.sweep(force=True)
            if len(self.sessions) >= cap:
                raise ProxyHTTPError(
                    429,
                    f"{len(self.sessions)} sessions are open, the most SessionLimits."
                    f"max_open_sessions={cap} allows; export or end finished sessions, or "
                    "raise it (AgentProxy(..., session_limits=SessionLimits(...)))",
                )
        if self.capacity is not None:
            if self.capacity <= 0:
                raise ProxyHTTPError(429, "no capacity granted; call /grant_capacity first")
            self.capacity -= 1
        session = Session(
            f"{task_id}-{next(self._counter)}",
            api_key or "sk-" + secrets.token_hex(16),
            task_id,
            last_active=self.clock(),
        )
        self.sessions[session.session_id] = session
        self._by_key[session.api_key] = session
        return session

    def end_session(self, session: Session) -> None:
        if not session.finished:
            session.ended_at = self.clock()
        session.finished = True

    def sweep(self, *, force: bool = False) -> list[str]:
        """Drop sessions past their SessionLimits (at most once per sweep interval)."""
        now = self.clock()
        if not force and now - self._last_sweep < self.session_limits.sweep_interval_s:
            return []
        self._last_sweep = now
        dropped = []
        for session in list(self.sessions.values()):
            if session.managed:
                continue
            reason = drop_reason(
                self.session_limits,
                idle_s=now - session.last_active,
                ended_s=None if session.ended_at is None else now - session.ended_at,
                in_flight=session.in_flight > 0,
            )
            if reason is not None:
                logger.warning("dropped proxy session %s: %s", session.session_id, reason)
                self.dropped.add(session.session_id, session.api_key, reason)
                self.remove_session(session)
                dropped.append(session.session_id)
        return dropped

    def session_by_key(self, key: str) -> Session | None:
        """The session ``key`` is bound to now, if any (no side effects)."""
        return self._by_key.get(key)

    def remove_session(self, session: Session) -> None:
        self.sessions.pop(session.session_id, None)
        if self._by_key.get(session.api_key) is session:  # a refresh rebinds the key
            del self._by_key[session.api_key]
        for cid in session.cache.ids():
            self._owner.pop(base_id_of(cid), None)

    def session_for(self, key: str | None) -> Session:
        """The session whose key a request carries; it counts as active now (a 401 if none)."""
        if key is None:
            raise ProxyHTTPError(401, "missing API key: send 'Authorization: Bearer <session key>'")
        self.sweep()
        session = self._by_key.get(key)
        if session is None:
            raise ProxyHTTPError(401, self.dropped.get(key) or "invalid API key for this proxy")
        session.last_active = self.clock()
        return session

    def session_by_id(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            dropped = self.dropped.get(session_id)
            raise ProxyHTTPError(404, dropped or f"unknown session_id {session_id!r}")
        return session

    def check_admin(self, key: str | None) -> None:
        # As bytes: compare_digest refuses str with non-ASCII characters (a 500 otherwise).
        if key is None or not secrets.compare_digest(_utf8(key), _utf8(self.admin_api_key)):
            raise ProxyHTTPError(
                401 if key is None or key not in self._by_key else 403, "admin key required"
            )

    def owned_completion(self, session: Session, cid: Any) -> None:
        """A 403 when ``cid`` is a completion of another session (a 400 when not a string)."""
        if not isinstance(cid, str):
            raise ProxyHTTPError(400, f"interaction_id must be a string, got {cid!r}")
        owner = self._owner.get(cid)
        if owner is not None and owner is not session:
            raise ProxyHTTPError(403, f"completion {cid!r} belongs to another session")

    def claim(self, session: Session, base_id: str) -> None:
        """Record that the completion ``base_id`` (and its samples) belongs to ``session``."""
        self._owner[base_id] = session

    def discard(self, session: Session, base_id: str) -> None:
        """Forget an answer the agent never received (its client left before delivery)."""
        session.cache.discard(base_id)
        if self._owner.get(base_id) is session:
            del self._owner[base_id]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
