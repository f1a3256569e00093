# SPDX-License-Identifier: Apache-2.0
"""Where ``serve`` can be reached, and the warning when it listens beyond this machine.

``--host 0.0.0.0`` (or ``::``) listens on every interface: ``http://0.0.0.0:PORT`` is not an
address a client can use, and anyone on the network can reach the model and, with the admin
key, read the trajectories. So the banner names the URLs that work (loopback first, then this
machine's own addresses) and says who can reach the server.
"""

from __future__ import annotations

import socket

from areal_devkit.runtime_facade import is_loopback

WILDCARDS = ("0.0.0.0", "::", "")


def url_host(host: str) -> str:
    """``host`` as it goes in a URL (IPv6 literals in brackets)."""
    return f"[{host}]" if ":" in host else host


def machine_addresses(ipv6: bool) -> list[str]:
    """This machine's own non-loopback addresses, from its host name (no traffic is sent)."""
    family = socket.AF_INET6 if ipv6 else socket.AF_INET
    found: list[str] = []
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, family, socket.SOCK_STREAM)
    except OSError:
        return found
    for info in infos:
        address = str(info[4][0]).split("%")[0]
        if not is_loopback(address) and address not in found:
            found.append(address)
    return found


def reachable_hosts(host: str) -> list[str]:
    """The hosts a client can use for a server bound to ``host``; loopback first."""
    if host not in WILDCARDS:
        return [host]
    ipv6 = host == "::"
    loopback = "::1" if ipv6 else "127.0.0.1"
    return [loopback, *machine_addresses(ipv6)]


def exposure_warning(host: str, port: int, admin_key_given: bool) -> str | None:
    """What a person must know when the server listens beyond loopback; None on loopback."""
    if is_loopback(host):
        return None
    where = "every network interface" if host in WILDCARDS else host
    hosts = reachable_hosts(host)
    urls = ", ".join(f"http://{url_host(h)}:{port}" for h in hosts)
    key = (
        "the admin key you gave"
        if admin_key_given
        else "the random admin key printed below (not stored anywhere)"
    )
    return (
        f"WARNING: listening on {where}: any machine that can reach this one can use the model "
        f"with a session key, and read every trajectory with {key}. Reachable at: {urls}. "
        "Use --host 127.0.0.1 to keep it on this machine."
    )
