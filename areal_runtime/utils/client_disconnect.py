# SPDX-License-Identifier: Apache-2.0
"""Cancel the work of a request whose client went away.

uvicorn does not cancel a handler when its client disconnects; it only delivers
``http.disconnect`` on the request's ASGI receive channel. :class:`DisconnectWatch` listens on
that channel (once the body was read) while the work runs and cancels the work when the
client leaves, so an engine call made for nobody is aborted and its slot freed (SGLang aborts
such a request too). The agent proxy and the SGLang-compatible server both use it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

CLIENT_CLOSED_REQUEST = 499  # nginx's status for "the client went away"; nobody reads it


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


class DisconnectWatch:
    """Watches one request's connection (after its body was read) for the client leaving."""

    def __init__(self, request: Any) -> None:
        self._receive = request.receive
        self._task = asyncio.ensure_future(self._wait())

    async def _wait(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass

    @property
    def gone(self) -> bool:
        return self._task.done() and not self._task.cancelled()

    async def settled(self) -> bool:
        """``gone``, after letting a disconnect the socket already reported reach the watch.

        Two turns of the loop: in the first the server's protocol handles the closed socket
        (the selector hands it over beside this coroutine) and wakes the watch, in the second
        the watch reads ``http.disconnect``. One turn missed a client that closed just before
        the last byte was written, and its abandoned answer was recorded as delivered.
        """
        for _ in range(2):
            await asyncio.sleep(0)
        return self.gone

    async def run(self, work: Awaitable[T]) -> T:
        """``work``'s result; cancels it and raises :class:`ClientGone` if the client leaves."""
        task = asyncio.ensure_future(work)
        try:
            await asyncio.wait({task, self._task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the caller itself was cancelled (inline transport)
            await _cancelled(task)
            raise
        if task.done():
            return task.result()
        await _cancelled(task)
        raise ClientGone

    async def close(self) -> None:
        """Stop watching; awaited so that no task outlives the request."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _cancelled(task: asyncio.Future) -> None:
    """Cancel ``task`` and wait until it has stopped (the engine has seen the cancellation)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


def client_gone_response() -> Any:
    """What a request whose client left gets (written to a closed connection: never read)."""
    from starlette.responses import Response

    return Response(status_code=CLIENT_CLOSED_REQUEST)
