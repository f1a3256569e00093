# SPDX-License-Identifier: Apache-2.0
"""Port and host helpers at AReaL's path (``areal.utils.network``).

Only what the runtime's callers and AReaL's tests use: free ports for test servers and
``torchrun`` rendezvous, and the host name.
"""

from __future__ import annotations

import ipaddress
import random
import socket


def is_loopback(host: str) -> bool:
    """``localhost``, or an address in 127.0.0.0/8 or ::1 (an IPv6 zone ``%lo`` ignored).

    The one test the proxy (admin key off loopback), the blocked-socket check and ``serve``'s
    printed addresses share, so the three agree on what "this machine only" means.
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def gethostname() -> str:
    return socket.gethostname()


def is_port_free(port: int) -> bool:
    """Whether ``port`` can be bound for both TCP and UDP right now."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as sock:
            try:
                sock.bind(("", port))
            except OSError:
                return False
    return True


def find_free_ports(
    count: int,
    port_range: tuple[int, int] = (10000, 32767),
    exclude_ports: set[int] | None = None,
) -> list[int]:
    """``count`` distinct free ports, sorted.

    Drawn at random below Linux's ephemeral range (32768+), so a port handed out here is not
    also handed to some unrelated outgoing connection before the caller binds it.
    """
    low, high = port_range
    excluded = set(exclude_ports or ())
    if count > high - low + 1 - len(excluded):
        raise ValueError(f"Cannot find {count} ports in range {port_range}.")
    found: set[int] = set()
    tried: set[int] = set()
    for _ in range(count * 10):
        if len(found) == count:
            break
        port = random.randint(low, high)
        if port in tried or port in excluded:
            continue
        tried.add(port)
        if is_port_free(port):
            found.add(port)
    if len(found) < count:
        raise ValueError(
            f"Could only find {len(found)} free ports out of {count} requested in {port_range}"
        )
    return sorted(found)
