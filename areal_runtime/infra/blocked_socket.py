# SPDX-License-Identifier: Apache-2.0
"""A sync request from the event loop to a server that same loop serves can never be answered.

The proxy serves the agent's model calls on the rollout loop; a sync ``requests.get`` or
``httpx.Client`` call to its ``base_url`` from inside ``run`` blocks that loop, so the server
never reads the request and the call waits for its timeout (or forever) on every episode. The
stall detector's watcher finds the socket the loop thread is blocked on, and when its peer is
a port this loop serves, the detector shuts the socket down: the call fails at once, and the report names
the line.
"""

from __future__ import annotations

import socket
from types import FrameType
from typing import Any

from areal_runtime.utils.network import is_loopback

# How far up from the innermost frame to look for the socket (socket.py, http.client, urllib3,
# httpcore's sync stream are all within a few frames of the blocked read).
_DEPTH = 12
_NETWORK_FILES = ("socket.py", "ssl.py", "client.py", "httpcore", "urllib3", "h11", "requests")


def _socket_in(value: Any) -> socket.socket | None:
    if isinstance(value, socket.socket):
        return value
    for name in ("_sock", "sock"):
        inner = getattr(value, name, None) if not isinstance(value, type) else None
        if isinstance(inner, socket.socket):
            return inner
    return None


def blocked_socket(frame: FrameType) -> socket.socket | None:
    """The socket the innermost frames of a thread's stack are reading or writing."""
    current: FrameType | None = frame
    for _ in range(_DEPTH):
        if current is None:
            return None
        # Only the network layers' frames: reading another frame's locals holds the GIL the
        # loop thread may be waiting for.
        if not any(part in current.f_code.co_filename for part in _NETWORK_FILES):
            current = current.f_back
            continue
        for value in list(current.f_locals.values()):
            found = _socket_in(value)
            if found is not None and found.fileno() != -1:
                return found
        current = current.f_back
    return None


def loopback_peer_served(
    frame: FrameType, served: set[tuple[str, int]]
) -> tuple[str, socket.socket] | None:
    """``("host:port", socket)`` when the thread blocks on a socket to a port in ``served``
    (loopback). The caller records that, then calls ``break_off``: once the socket is shut
    down the blocked call returns at once, and the record must already be there."""
    if not served:
        return None
    sock = blocked_socket(frame)
    if sock is None:
        return None
    try:
        peer = sock.getpeername()
    except OSError:
        return None
    if not isinstance(peer, tuple) or len(peer) < 2:
        return None
    host, port = str(peer[0]), int(peer[1])
    if not is_loopback(host) or port not in {p for _, p in served}:
        return None
    return f"{host}:{port}", sock


def break_off(sock: socket.socket) -> bool:
    """Shut the socket down so a call blocked on it fails now; False if it already was."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        return False
    return True
