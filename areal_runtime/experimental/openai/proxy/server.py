# SPDX-License-Identifier: Apache-2.0
"""The proxy's HTTP edge: its Starlette app, with AReaL's routes and authentication.

Agents call an API route (``/chat/completions``, ``/responses``, ``/v1/messages``: one adapter
each in ``apis/``) with their session key as a Bearer token or ``x-api-key``. The trainer side
uses the admin key for ``/grant_capacity``, ``/rl/start_session`` and ``/export_trajectories``;
sessions use their own key for ``/rl/set_reward`` and ``/rl/end_session``. A session can never
touch another's completions (``sessions.py``). ``service.py`` answers one API request
(:class:`ProxyState`); an answer is recorded only once it reached the agent (``delivery.py``).

Each request leaves what the proxy parsed in ``request.state.proxy_request`` (a
:class:`ParsedRequest`: session, JSON body, answer id, error), for ASGI middleware such as
``areal-devkit serve``'s request log to read without parsing the body again.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from areal_runtime.experimental.openai.proxy.endpoints import PROXY_ROUTES
from areal_runtime.experimental.openai.proxy.endpoints import api_routes as default_api_routes
from areal_runtime.experimental.openai.proxy.proxy_gateway import SessionGateway
from areal_runtime.experimental.openai.proxy.routing import EXCEPTION_HANDLERS, ParsedRequest
from areal_runtime.experimental.openai.proxy.service import ProxyState, answer_json
from areal_runtime.experimental.openai.proxy.sessions import DEFAULT_ADMIN_API_KEY, SessionData

__all__ = [
    "DEFAULT_ADMIN_API_KEY",
    "ParsedRequest",
    "ProxyState",
    "SessionData",
    "answer_json",
    "create_proxy_app",
]


def create_proxy_app(
    state: ProxyState,
    gateway: SessionGateway | None = None,
    *,
    api_routes: list[BaseRoute] | None = None,
    middleware: Sequence[Middleware] = (),
) -> Starlette:
    """The ASGI app: serve it with uvicorn or drive it with ``httpx.ASGITransport``.

    ``gateway`` decides session start, refresh and end (AReaL's gateway rules); one over
    ``state`` is made when none is given. ``api_routes`` replace the API routes that generate
    with ``state``'s engine (AReaL's worker process hands them to its client instead); they
    come first, so one of them may also replace a proxy route (the worker's ``/health``).
    ``middleware`` wraps every route of the app (``serve``'s request log).
    """
    routes = [*(default_api_routes() if api_routes is None else api_routes), *PROXY_ROUTES]
    app = Starlette(
        routes=routes, exception_handlers=dict(EXCEPTION_HANDLERS), middleware=list(middleware)
    )
    app.state.proxy = state
    app.state.gateway = gateway or SessionGateway(state)
    return app
