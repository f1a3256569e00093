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

import math
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from areal_runtime.errors import ProxyHTTPError, UnknownCompletionError
from areal_runtime.experimental.openai.proxy.apis import APIS, ApiAdapter, api_for_path
from areal_runtime.experimental.openai.proxy.apis.adapter import error_response
from areal_runtime.experimental.openai.proxy.delivery import (
    ClientGone,
    DisconnectWatch,
    client_gone_response,
    tracked,
)
from areal_runtime.experimental.openai.proxy.export_format import export_body
from areal_runtime.experimental.openai.proxy.limits import read_json
from areal_runtime.experimental.openai.proxy.proxy_gateway import (
    SessionGateway,
    completed_session,
    models_list,
)
from areal_runtime.experimental.openai.proxy.request import session_key
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


@dataclass
class ParsedRequest:
    """What the proxy read from one request: its session and its body as parsed JSON.

    ``api`` names the API adapter of the route (None for the proxy's own routes). ``session``
    is set once the session key was accepted, ``body`` once the body was read within the
    limits (a refused body stays None), ``answer_id`` once the engine answered, ``error`` to
    the message of an error answer.
    """

    api: str | None
    session: SessionData | None = None
    body: Any = None
    answer_id: str | None = None
    error: str | None = None


def _finite_number(value: Any) -> bool:
    """An int or float that is a finite float (a 400-digit int overflows the trainer's)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def create_proxy_app(
    state: ProxyState,
    gateway: SessionGateway | None = None,
    *,
    api_routes: list[Route] | None = None,
) -> Starlette:
    """The ASGI app: serve it with uvicorn or drive it with ``httpx.ASGITransport``.

    ``gateway`` decides session start, refresh and end (AReaL's gateway rules); one over
    ``state`` is made when none is given. ``api_routes`` replace the API routes that generate
    with ``state``'s engine (AReaL's worker process hands them to its client instead).
    """
    gateway = gateway or SessionGateway(state)

    async def _json(request: Request) -> Any:
        body = request.state.proxy_request.body = await read_json(request, state.limits)
        return body

    def _key_of(request: Request) -> str | None:
        return session_key(request.headers)

    def _session(request: Request) -> SessionData:
        session = request.state.proxy_request.session = state.session_for(_key_of(request))
        return session

    def handler(fn: Any, api: ApiAdapter | None = None) -> Any:
        async def endpoint(request: Request) -> Response:
            parsed = request.state.proxy_request = ParsedRequest(api.name if api else None)
            try:
                result = await fn(request)
                return result if isinstance(result, Response) else JSONResponse(result)
            except ProxyHTTPError as exc:
                status, parsed.error = exc.status, str(exc)
            except Exception as exc:  # the agent sees an error body, not a hang
                status, parsed.error = 500, f"{type(exc).__name__}: {exc}"
            return error_response(status, parsed.error, api)

        return endpoint

    def api_endpoint(api: ApiAdapter) -> Any:
        async def serve(request: Request) -> Response:
            """Generate while the client is connected; keep the record only if it got the answer."""
            parsed = request.state.proxy_request
            session = _session(request)
            body = await _json(request)
            watch = DisconnectWatch(request)
            try:
                answer, req = await watch.run(state.answer(api, session, body))
            except ClientGone:
                await watch.close()
                return client_gone_response()
            except BaseException:
                await watch.close()
                raise
            answer_id = parsed.answer_id = answer["id"]
            return tracked(
                api.render(answer, req),
                watch,
                on_delivered=lambda: session.completions.mark_delivered(answer_id),
                on_lost=lambda: state.discard(session, answer_id),
            )

        return handler(serve, api)

    async def get_completion(request: Request) -> dict[str, Any]:
        session = _session(request)
        cid = request.path_params["cid"]
        state.owned_completion(session, cid)
        if cid not in session.completions:
            raise ProxyHTTPError(404, f"no completion {cid!r} in this session")
        return answer_json(session.completions[cid])

    async def grant_capacity(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        state.capacity = (state.capacity or 0) + 1
        return {"capacity": state.capacity}

    async def start_session(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        body = await _json(request)
        body = body if isinstance(body, dict) else {}
        started = await gateway.start_session(body.get("task_id"), body.get("api_key"))
        return {"session_id": started.session_id, "api_key": started.api_key}

    async def set_reward(request: Request) -> dict[str, Any]:
        session = _session(request)
        body = await _json(request)
        if not isinstance(body, dict) or "reward" not in body:
            raise ProxyHTTPError(400, "body must be {interaction_id: str | null, reward: number}")
        reward, cid = body["reward"], body.get("interaction_id")
        if not _finite_number(reward):
            raise ProxyHTTPError(400, f"reward must be a finite number, got {reward!r}")
        try:
            if cid is None:
                session.completions.set_last_reward(reward)
            else:
                state.owned_completion(session, cid)
                session.completions.set_reward(cid, reward)
        except (UnknownCompletionError, ValueError) as exc:
            raise ProxyHTTPError(400, f"interaction_id: {exc}") from None
        return {"ok": True, "message": "success"}  # AReaL's reply is {"message": "success"}

    async def end_session(request: Request) -> dict[str, Any]:
        count = gateway.end_session(_session(request))
        return {"ok": True, "message": "success", "interaction_count": count}

    async def wait_for_session(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        return await completed_session(gateway, await _json(request))

    async def health(request: Request) -> dict[str, Any]:
        return {"status": "ok", "workers": 1, "sessions": len(state.sessions)}

    async def models(request: Request) -> dict[str, Any]:
        return models_list()

    async def export(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        body = await _json(request)
        if not isinstance(body, dict):
            raise ProxyHTTPError(400, "body must be {session_id: str, discount?: number, style?}")
        session_id = body.get("session_id")
        if session_id is None:  # AReaL's request model: a missing field is a 422
            raise ProxyHTTPError(422, "session_id is required: {session_id: str}")
        if not isinstance(session_id, str):
            raise ProxyHTTPError(400, f"session_id must be a string, got {session_id!r}")
        session = state.session_by_id(session_id)
        discount = body.get("discount", 1.0)
        if not _finite_number(discount) or not 0 <= discount <= 1:
            raise ProxyHTTPError(400, f"discount must be a number in [0, 1], got {discount!r}")
        try:  # checks the style before the discount changes the session's rewards
            exported = session.export_interactions(float(discount), body.get("style", "individual"))
        except ValueError as exc:
            raise ProxyHTTPError(400, f"style: {exc}") from None
        state.remove_session(session)
        return export_body(exported)

    if api_routes is None:
        api_routes = [
            Route(path, api_endpoint(api), methods=["POST"])
            for api in APIS.values()
            for path in api.routes
        ]
    routes = list(api_routes)
    routes += [
        Route(path, handler(get_completion), methods=["GET"])
        for path in ("/chat/completions/{cid}", "/v1/chat/completions/{cid}")
    ]
    routes += [
        Route("/grant_capacity", handler(grant_capacity), methods=["POST"]),
        Route("/rl/start_session", handler(start_session), methods=["POST"]),
        Route("/rl/set_reward", handler(set_reward), methods=["POST"]),
        Route("/rl/end_session", handler(end_session), methods=["POST"]),
        Route("/export_trajectories", handler(export), methods=["POST"]),
        Route("/internal/wait_for_session", handler(wait_for_session), methods=["POST"]),
        Route("/health", handler(health), methods=["GET"]),
        Route("/models", handler(models), methods=["GET"]),
        Route("/v1/models", handler(models), methods=["GET"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        """Unknown paths and wrong methods: the same JSON error shape as every other refusal."""
        status = getattr(exc, "status_code", 400)
        detail = getattr(exc, "detail", "") or "refused"
        message = f"{request.method} {request.url.path}: {detail}"
        request.state.proxy_request = ParsedRequest(None, error=message)
        return error_response(status, message, api_for_path(request.url.path))

    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})
