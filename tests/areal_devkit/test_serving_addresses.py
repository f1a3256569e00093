# SPDX-License-Identifier: Apache-2.0
"""Which URLs ``serve`` prints for the address it listens on, and when it warns."""

from __future__ import annotations

from areal_devkit.serving.addresses import exposure_warning, reachable_hosts


def test_loopback_hosts_are_quiet_and_printed_as_given() -> None:
    for host in ("127.0.0.1", "localhost", "::1"):
        assert exposure_warning(host, 8000, admin_key_given=False) is None
        assert reachable_hosts(host) == [host]


def test_a_wildcard_host_is_reached_through_loopback_first() -> None:
    assert reachable_hosts("0.0.0.0")[0] == "127.0.0.1"
    assert reachable_hosts("::")[0] == "::1"
    assert "0.0.0.0" not in reachable_hosts("0.0.0.0")


def test_the_warning_names_who_can_reach_it_and_the_urls() -> None:
    text = exposure_warning("0.0.0.0", 8000, admin_key_given=False)
    assert text is not None
    assert "every network interface" in text and "http://127.0.0.1:8000" in text
    assert "random admin key" in text
    named = exposure_warning("192.0.2.7", 9000, admin_key_given=True)
    assert named is not None and "listening on 192.0.2.7" in named
    assert "http://192.0.2.7:9000" in named and "the admin key you gave" in named
    assert "http://[fe80::1]:1" in exposure_warning("fe80::1", 1, admin_key_given=True)
