# SPDX-License-Identifier: Apache-2.0
"""Whether an answer reached the agent: what the agent never got is never trained on.

A client that goes away before its answer is delivered (a timeout, a cancelled task, a killed
process) closes its connection. :class:`DisconnectWatch` (``utils/client_disconnect.py``,
shared with the SGLang-compatible server) notices: while the engine is still
generating, :meth:`DisconnectWatch.run` cancels the generation (the engine's request is aborted
with it, where the engine supports cancellation) and nothing is recorded. A completion that was
generated is recorded as pending, and :func:`tracked` confirms it only once the last byte of
the answer (the whole JSON body, or the stream's final event) was handed to a connection that
was still open; otherwise it is discarded. A pending completion is never exported and never
takes a reward sent without an ``interaction_id``. "Delivered" is as much as a server can know:
bytes written to an open connection; a client that drops the connection after that point got
the answer into its socket buffer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import Response, StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from areal_runtime.utils.client_disconnect import (
    CLIENT_CLOSED_REQUEST,
    ClientGone,
    DisconnectWatch,
    client_gone_response,
)

__all__ = [
    "CLIENT_CLOSED_REQUEST",
    "ClientGone",
    "DisconnectWatch",
    "client_gone_response",
    "tracked",
]


class _Tracked(Response):
    """``inner`` as sent, calling ``on_delivered`` or ``on_lost`` once the send is over.

    A JSON answer is delivered when its body is written to an open connection. A stream is
    delivered once its last event is written: clients (the OpenAI SDK among them) may close
    the connection as soon as they read the final event, before the empty end-of-body frame.
    """

    def __init__(
        self,
        inner: Response,
        watch: DisconnectWatch,
        on_delivered: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.inner = inner
        self.status_code = inner.status_code
        self._watch = watch
        self._on_delivered = on_delivered
        self._on_lost = on_lost
        self._delivered = False

    async def _confirming(self, chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for chunk in chunks:
            if await self._watch.settled():
                return  # the client left mid-stream: it never got the whole answer
            yield chunk
        self._confirm()  # runs once the server has written the last event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streaming = isinstance(self.inner, StreamingResponse)
        if streaming:
            self.inner.body_iterator = self._confirming(self.inner.body_iterator)

        async def send_and_check(message: Message) -> None:
            last = message["type"] == "http.response.body" and not message.get("more_body")
            if last and not streaming and await self._watch.settled():
                return  # the client left: the answer goes nowhere
            await send(message)
            if last and not streaming:
                self._confirm()

        try:
            await self.inner(scope, receive, send_and_check)
        finally:
            await self._watch.close()
            if not self._delivered:
                self._on_lost()

    def _confirm(self) -> None:
        """At once, not when the response returns: the agent may already be sending more."""
        self._delivered = True
        self._on_delivered()


def tracked(
    response: Response,
    watch: DisconnectWatch,
    on_delivered: Callable[[], None],
    on_lost: Callable[[], None],
) -> Response:
    """``response``, reporting whether it reached the client (see the module docstring)."""
    return _Tracked(response, watch, on_delivered, on_lost)
