# SPDX-License-Identifier: Apache-2.0
"""The one way the runtime serves an HTTP app: uvicorn, in this event loop, on a TCP socket.

Why one: the agent proxy (``AgentProxy``, and through it ``serve``, the online trainer's
gateway and socket agents) and the SGLang-compatible engine server are both Starlette apps, so
one host starts both the same way, with the socket made by :func:`tcp_listening_socket` (so
``TCP_NODELAY`` holds on every connection) and uvicorn's access log off. What a server checks
per request (its body cap, a client that left) is the app's own business.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from areal_runtime.utils.listening_socket import bound_port, tcp_listening_socket


@dataclass
class ServedApp:
    """A running server: ``address`` is ``host:port``; ``await close()`` stops it."""

    host: str
    port: int
    server: Any  # uvicorn.Server
    task: asyncio.Task

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    async def wait(self) -> None:
        """Until the server stops (uvicorn stops on SIGINT or SIGTERM, then re-raises it)."""
        await asyncio.shield(self.task)

    async def close(self) -> None:
        """Stop accepting, let open requests finish, and return once the server is down."""
        self.server.should_exit = True
        await self.task


async def serve_app(app: Any, host: str = "127.0.0.1", port: int = 0) -> ServedApp:
    """Serve the ASGI ``app`` on ``host:port`` (0 lets the OS choose) until ``close()``."""
    import uvicorn

    sock = tcp_listening_socket(host, port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            sock.close()
            task.result()  # the startup error
            raise RuntimeError(f"the server on {host}:{port} stopped before it started")
        await asyncio.sleep(0.01)
    return ServedApp(host, bound_port(sock), server, task)
