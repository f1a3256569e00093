# SPDX-License-Identifier: Apache-2.0
"""A request body read within a byte cap, refused before the rest of it is read.

Both HTTP fronts of an engine (the agent proxy and the SGLang-compatible server) read bodies
this way: a declared ``content-length`` over the cap is refused before a byte is read, and a
chunked body as soon as what arrived passes the cap, so a hostile client cannot make the server
hold more than the cap in memory. Each front turns :class:`BodyTooLarge` into its own 413.
"""

from __future__ import annotations

from typing import Any


class BodyTooLarge(ValueError):
    """The body has more than ``limit`` bytes: ``size`` is what was declared or seen so far."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the request body has {size}+ bytes; the limit is {limit}")
        self.size = size
        self.limit = limit


async def read_capped(request: Any, limit: int) -> bytes:
    """The body of a Starlette ``request``, at most ``limit`` bytes; BodyTooLarge otherwise."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)
