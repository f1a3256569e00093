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

import asyncio
import itertools
import logging
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.cache import InteractionCache, check_export_style
from areal_runtime.experimental.openai.proxy.request import base_id_of
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward

DEFAULT_ADMIN_API_KEY = "areal-admin-key"
ADMIN_KEY_REFUSED = (
    "Cannot use the admin API key as a session key: the admin key is never one; omit api_key"
)
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


class SessionData:
    """One session: its completions, key, task and lifetime (AReaL's ``server.SessionData``).

    AReaL's worker keeps these by id; the runtime's registry also keeps who may use it (the key),
    which episode it serves (``task_id``), warnings and the bookkeeping of its bounds.
    """

    def __init__(
        self,
        session_id: str,
        api_key: str = "",
        task_id: Any = None,
        *,
        last_active: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.api_key = api_key
        self.task_id = task_id
        self.completions = InteractionCache()
        self.warnings: list[str] = []  # e.g. tool calls that could not be parsed
        # The registry's clock at the session's last request, and when it ended.
        self.last_active = time.monotonic() if last_active is None else last_active
        self.ended_at: float | None = None
        self.in_flight = 0  # requests generating now: a session busy generating is not idle
        # Held by AgentProxy.session(), which removes it on exit: never dropped by the sweep,
        # so an agent that waits long on a tool keeps its episode.
        self.managed = False
        self._completed = False

    def __repr__(self) -> str:
        state = "completed" if self._completed else "open"
        return f"SessionData({self.session_id!r}, {len(self.completions)} completions, {state})"

    def update_last_access(self, now: float | None = None) -> None:
        self.last_active = time.monotonic() if now is None else now

    def is_stale(self, timeout_seconds: float = 3600.0, now: float | None = None) -> bool:
        """No request for ``timeout_seconds``."""
        return (time.monotonic() if now is None else now) - self.last_active > timeout_seconds

    def finish(self, now: float | None = None) -> None:
        """End the session: no more requests; the export may run."""
        if not self._completed:
            self.ended_at = time.monotonic() if now is None else now
        self._completed = True

    @property
    def is_completed(self) -> bool:
        return self._completed

    async def wait_for_finish(self, timeout: float | None = None, poll_s: float = 0.05) -> bool:
        """Wait until :meth:`finish` ran; False if ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._completed:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(poll_s)
        return True

    def export_interactions(
        self, discount: float, style: str
    ) -> dict[str, InteractionWithTokenLogpReward]:
        """The discounted completions in ``style`` (the style is checked before any reward
        changes, and the discount runs once)."""
        check_export_style(style)
        if not self.completions:
            return {}
        self.completions.apply_reward_discount(turn_discount=discount)
        return self.completions.export_interactions(style=style)


class SessionRegistry:
    """Sessions by id, which key each is bound to, the owner of each completion id, the admin
    key and the capacity: the state of AReaL's proxy worker.

    The maps are AReaL's (session id -> session, key -> session id, session id -> key), so
    ``proxy_rollout_server`` can keep them in its module globals as AReaL's worker does.
    """

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
        self.sessions: dict[str, SessionData] = {}
        self.key_to_session: dict[str, str] = {}
        self.session_to_key: dict[str, str] = {}
        self._owner: dict[str, SessionData] = {}  # base completion id -> its session
        self._counter = itertools.count()
        self.capacity: int | None = None  # None: unlimited; else what /grant_capacity granted

    def start_session(self, task_id: Any = None, *, api_key: str | None = None) -> SessionData:
        """A new session with a new key, or bound to ``api_key`` (refresh / reuse).

        As AReaL's worker: the admin key is refused (400), a key bound to a session still open
        is refused (409: end it first, as the gateway's refresh does), a key whose session
        ended is rebound (the ended session stays until its export).
        """
        self.sweep()
        if api_key is not None and api_key == self.admin_api_key:
            raise ProxyHTTPError(400, ADMIN_KEY_REFUSED)
        current = self.session_by_key(api_key) if api_key else None
        if current is not None and not current.is_completed:
            raise ProxyHTTPError(
                409, f"API key is already bound to active session {current.session_id}."
            )
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
                raise ProxyHTTPError(429, "No available capacity to start a new session")
            self.capacity -= 1
        if api_key:
            self._unbind(api_key)
        else:
            api_key = "sk-" + secrets.token_hex(16)
        session_id = f"{task_id}-{next(self._counter)}"
        while session_id in self.sessions:
            session_id = f"{task_id}-{next(self._counter)}"
        session = SessionData(session_id, api_key, task_id, last_active=self.clock())
        self.sessions[session_id] = session
        self.key_to_session[api_key] = session_id
        self.session_to_key[session_id] = api_key
        return session

    def _unbind(self, api_key: str) -> None:
        sid = self.key_to_session.pop(api_key, None)
        if sid is not None and self.session_to_key.get(sid) == api_key:
            del self.session_to_key[sid]

    def end_session(self, session: SessionData) -> None:
        session.finish(self.clock())

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
                key = self.session_to_key.get(session.session_id, session.api_key)
                self.dropped.add(session.session_id, key, reason)
                self.remove_session(session)
                dropped.append(session.session_id)
        return dropped

    def session_by_key(self, key: str | None) -> SessionData | None:
        """The session ``key`` is bound to now, if any (no side effects)."""
        sid = self.key_to_session.get(key) if key is not None else None
        return None if sid is None else self.sessions.get(sid)

    def remove_session(self, session: SessionData) -> None:
        self.sessions.pop(session.session_id, None)
        key = self.session_to_key.pop(session.session_id, None)
        if key is not None and self.key_to_session.get(key) == session.session_id:
            del self.key_to_session[key]  # a refresh may have rebound the key already
        for cid in session.completions:
            self._owner.pop(base_id_of(cid), None)

    def session_for(self, key: str | None) -> SessionData:
        """The session whose key a request carries; it counts as active now (a 401 if none)."""
        if key is None:
            raise ProxyHTTPError(401, "missing API key: send 'Authorization: Bearer <session key>'")
        self.sweep()
        session = self.session_by_key(key)
        if session is None:
            raise ProxyHTTPError(401, self.dropped.get(key) or "invalid API key for this proxy")
        session.last_active = self.clock()
        return session

    def session_by_id(self, session_id: str) -> SessionData:
        session = self.sessions.get(session_id)
        if session is None:
            dropped = self.dropped.get(session_id)
            raise ProxyHTTPError(404, dropped or f"unknown session_id {session_id!r}")
        return session

    def check_admin(self, key: str | None) -> None:
        # As bytes: compare_digest refuses str with non-ASCII characters (a 500 otherwise).
        if key is None or not secrets.compare_digest(_utf8(key), _utf8(self.admin_api_key)):
            raise ProxyHTTPError(
                401 if key is None or key not in self.key_to_session else 403,
                "admin key required",
            )

    def owned_completion(self, session: SessionData, cid: Any) -> None:
        """A 403 when ``cid`` is a completion of another session (a 400 when not a string)."""
        if not isinstance(cid, str):
            raise ProxyHTTPError(400, f"interaction_id must be a string, got {cid!r}")
        owner = self._owner.get(cid)
        if owner is not None and owner is not session:
            raise ProxyHTTPError(403, f"completion {cid!r} belongs to another session")

    def claim(self, session: SessionData, base_id: str) -> None:
        """Record that the completion ``base_id`` (and its samples) belongs to ``session``."""
        self._owner[base_id] = session

    def discard(self, session: SessionData, base_id: str) -> None:
        """Forget an answer the agent never received (its client left before delivery)."""
        session.completions.discard(base_id)
        if self._owner.get(base_id) is session:
            del self._owner[base_id]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
