# SPDX-License-Identifier: Apache-2.0
"""The analyses several rules share, kept apart from the rules (as flake8-async keeps
``visitor_utility.py`` apart from its visitors), so a rule module holds only its rules and a
false-positive fix in one analysis is found and read in one place:

* ``async_clients``: the coroutine methods of httpx, aiohttp, the LLM SDKs and the runtime's
  clients, and what awaiting them gives (ARL201-203; rendered into docs/lint_rules.md);
* ``coroutine_calls``: which calls make a coroutine (ARL2xx, ARL4xx);
* ``coroutine_flow``: where an un-awaited coroutine goes inside a function (ARL201-203, ARL402);
* ``transports``: which ``http_client=`` values are shared, optional or private (ARL3xx);
* ``trajectory_facts``: what a function binds and trains, and where its ids come from (ARL5xx);
* ``tables``: the names of blocking, file, HTTP, LLM and waiting APIs (ARL1xx).

Scopes, name resolution and receiver types, read by every family, are ``areal_lint.context``.
"""
