# SPDX-License-Identifier: Apache-2.0
"""How many sessions the proxy holds and for how long: its state stays bounded.

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

import math
from collections import OrderedDict
from dataclasses import dataclass

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
