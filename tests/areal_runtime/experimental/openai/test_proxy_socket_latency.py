# SPDX-License-Identifier: Apache-2.0
"""The socket transport answers keep-alive requests without a Nagle / delayed-ACK wait.

Before the listening socket was made as a TCP socket, every sequential keep-alive request over
the socket waited about 44 ms (the client's delayed ACK, 40 ms at least on Linux). What is
measured is the time a request keeps the loop's thread blocked (wall less its CPU and run-queue
time), so a loaded machine does not fail the bound (half the old wait) and the old wait still
does.
"""

import asyncio
import socket
import statistics
import threading
import time

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.utils.listening_socket import bound_port, tcp_listening_socket

BOUND_S = 0.020  # median per request; the Nagle wait was ~0.044 s


def off_cpu_idle_s() -> float:
    """Wall time less the time this thread ran or waited for a CPU (Linux schedstat): what is
    left is time blocked, as a delayed ACK blocks. A busy machine adds run-queue wait, which
    is taken out, so it cannot fail the bound; elsewhere the wall clock alone."""
    wall = time.perf_counter()
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            on_cpu_ns, queued_ns = (int(v) for v in f.read().split()[:2])
    except OSError:
        return wall
    return wall - (on_cpu_ns + queued_ns) / 1e9


async def median_latency(send, n: int = 25) -> float:
    """The median time a request kept this (the loop's) thread blocked, not computing."""
    await send()  # connect and warm up
    times = []
    for _ in range(n):
        start = off_cpu_idle_s()
        await send()
        times.append(off_cpu_idle_s() - start)
    return statistics.median(times)


@pytest.mark.asyncio
async def test_sequential_keep_alive_requests_over_the_socket_do_not_wait_for_acks():
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok, transport="socket") as proxy:
        admin = {"authorization": f"Bearer {proxy.admin_api_key}"}
        # One dedicated keep-alive connection is what is measured.
        async with httpx.AsyncClient(base_url=proxy.base_url) as http:  # noqa: ARL302
            start = await median_latency(
                lambda: http.post("/rl/start_session", json={}, headers=admin)
            )
            key = (await http.post("/rl/start_session", json={}, headers=admin)).json()["api_key"]
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            turn = await median_latency(
                lambda: http.post(
                    "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
                )
            )
    assert start < BOUND_S, f"/rl/start_session median {start * 1000:.1f} ms"
    assert turn < BOUND_S, f"chat turn median {turn * 1000:.1f} ms"


@pytest.mark.asyncio
@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
async def test_connections_accepted_on_the_listening_socket_have_tcp_nodelay(host):
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    sock = tcp_listening_socket(host, 0)
    nodelay = asyncio.get_running_loop().create_future()

    async def accepted(reader, writer):
        raw = writer.get_extra_info("socket")
        nodelay.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=sock)
    try:
        connect_host = "127.0.0.1" if host == "localhost" else host
        _, writer = await asyncio.open_connection(connect_host, bound_port(sock))
        assert await asyncio.wait_for(nodelay, 5) != 0
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


def test_a_port_in_use_is_a_clear_error():
    first = tcp_listening_socket("127.0.0.1", 0)
    first.listen()
    try:
        with pytest.raises(OSError, match=r"cannot listen on 127\.0\.0\.1:.*pass port=0"):
            tcp_listening_socket("127.0.0.1", bound_port(first))
    finally:
        first.close()
