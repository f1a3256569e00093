# SPDX-License-Identifier: Apache-2.0
"""The listening socket every server the project starts is served on.

Why a helper: asyncio turns ``TCP_NODELAY`` on for an accepted connection only when the
listening socket's protocol is ``IPPROTO_TCP``, and ``socket.socket()`` leaves it 0. Without
``TCP_NODELAY``, a keep-alive response written in two pieces (headers, then body) meets the
client's delayed ACK (Nagle's algorithm) and every request waits about 40 ms. uvicorn serves
``sockets=[...]`` as given, so the socket must be made right; aiohttp sets the option itself,
but its server uses this helper too so that no server depends on that.
"""

from __future__ import annotations

import socket


def tcp_listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A bound TCP socket on ``host:port`` (0: the OS picks a port); serve it with any server.

    The protocol is ``IPPROTO_TCP`` so asyncio sets ``TCP_NODELAY`` on each accepted
    connection; ``SO_REUSEADDR`` lets a restarted server take its port back at once. The
    socket is not listening yet: the server calls ``listen``.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host, family = "127.0.0.1", socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(
            exc.errno,
            f"cannot listen on {host}:{port}: {exc.strerror}; pick another port or "
            "pass port=0 to let the OS choose",
        ) from exc
    return sock


def bound_port(sock: socket.socket) -> int:
    """The port ``sock`` is bound to (the OS's choice when it was made with port 0)."""
    return sock.getsockname()[1]
