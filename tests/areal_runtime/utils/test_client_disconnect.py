# SPDX-License-Identifier: Apache-2.0
"""DisconnectWatch sees a client that closed its connection before the answer's last byte."""

import asyncio
from types import SimpleNamespace

import pytest

from areal_runtime.utils.client_disconnect import DisconnectWatch


def closing_channel() -> tuple[SimpleNamespace, asyncio.Event]:
    """An ASGI request whose receive channel reports a disconnect once ``closed`` is set."""
    closed = asyncio.Event()

    async def receive() -> dict:
        await closed.wait()
        return {"type": "http.disconnect"}

    return SimpleNamespace(receive=receive), closed


@pytest.mark.asyncio
async def test_a_close_the_selector_reports_with_the_check_is_seen():
    request, closed = closing_channel()
    watch = DisconnectWatch(request)
    await asyncio.sleep(0)  # the watch is waiting on the channel
    # The selector reports the closed socket in the loop's next turn, the turn the check's own
    # first wake-up runs in: the server's protocol then sets the channel's event.
    asyncio.get_running_loop().call_soon(closed.set)
    assert await watch.settled()
    await watch.close()


@pytest.mark.asyncio
async def test_an_open_connection_is_not_reported_gone():
    request, _ = closing_channel()
    watch = DisconnectWatch(request)
    assert not await watch.settled()
    await watch.close()
