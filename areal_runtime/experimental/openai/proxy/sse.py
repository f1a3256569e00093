# SPDX-License-Identifier: Apache-2.0
"""Server-sent events: how every API streams.

The proxy generates a whole answer first (the engine returns whole completions), then streams
it as the API's events, so a streamed episode records exactly the tokens a non-streamed one
does. Chat completions end with ``data: [DONE]``; Responses and Messages name each event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from starlette.responses import StreamingResponse


def sse_response(
    events: Iterable[tuple[str | None, dict[str, Any]]], *, done_marker: bool = False
) -> StreamingResponse:
    """``(event name or None, data)`` pairs as a ``text/event-stream`` response."""

    async def body() -> AsyncIterator[str]:
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            yield f"{head}data: {json.dumps(data)}\n\n"
        if done_marker:
            yield "data: [DONE]\n\n"

    return StreamingResponse(
        body(), media_type="text/event-stream", headers={"cache-control": "no-cache"}
    )


def text_pieces(text: str, size: int = 4) -> list[str]:
    """``text`` in small pieces, as a streaming server sends it."""
    return [text[i : i + size] for i in range(0, len(text), size)]
