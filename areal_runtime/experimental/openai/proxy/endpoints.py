# SPDX-License-Identifier: Apache-2.0
"""The proxy's endpoints, as plain functions, and the route tables that place them.

Each endpoint reads the key and body of its request, asks the service (``service.py``) or the
session gateway (``proxy_gateway.py``) and returns JSON; it refuses by raising
:class:`~areal_runtime.errors.ProxyHTTPError` (``routing.py`` turns that into a response). The
service and gateway of an app are in ``request.app.state`` (``proxy`` and ``gateway``), set by
``server.create_proxy_app``.
"""

from __future__ import annotations

import math
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, get_route_path
from starlette.types import Scope

from areal_runtime.errors import ProxyHTTPError, UnknownCompletionError
from areal_runtime.experimental.openai.proxy.apis import APIS
from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import MESSAGES
from areal_runtime.experimental.openai.proxy.apis.responses import RESPONSES
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
from areal_runtime.experimental.openai.proxy.routing import ProxyRoute
from areal_runtime.experimental.openai.proxy.service import ProxyState, answer_json
from areal_runtime.experimental.openai.proxy.sessions import SessionData


def _state(request: Request) -> ProxyState:
    return request.app.state.proxy


def _gateway(request: Request) -> SessionGateway:
    return request.app.state.gateway


async def _json(request: Request) -> Any:
    body = request.state.proxy_request.body = await read_json(request, _state(request).limits)
    return body


def _session(request: Request) -> SessionData:
    session = _state(request).session_for(session_key(request.headers))
    request.state.proxy_request.session = session
    return session


def _admin(request: Request) -> None:
    _state(request).check_admin(session_key(request.headers))


def _finite_number(value: Any) -> bool:
    """An int or float that is a finite float (a 400-digit int overflows the trainer's)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


# --- the client APIs ----------------------------------------------------------------------


async def api_answer(request: Request) -> Response:
    """Generate while the client is connected; keep the record only if it got the answer."""
    parsed = request.state.proxy_request
    api, state = APIS[parsed.api], _state(request)
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


async def count_message_tokens(request: Request) -> dict[str, Any]:
    """Anthropic's ``POST /v1/messages/count_tokens``: a Messages body without ``max_tokens``."""
    body = await _json(request)
    if isinstance(body, dict) and "max_tokens" not in body:
        body = {**body, "max_tokens": 1}  # required to generate, not to count
    return {"input_tokens": _state(request).prompt_tokens(MESSAGES, _session(request), body)}


async def count_response_tokens(request: Request) -> dict[str, Any]:
    """OpenAI's ``POST /v1/responses/input_tokens``: a Responses body's input, counted."""
    body = await _json(request)
    tokens = _state(request).prompt_tokens(RESPONSES, _session(request), body)
    return {"object": "response.input_tokens", "input_tokens": tokens}


async def get_completion(request: Request) -> dict[str, Any]:
    session = _session(request)
    cid = request.path_params["cid"]
    _state(request).owned_completion(session, cid)
    if cid not in session.completions:
        raise ProxyHTTPError(404, f"no completion {cid!r} in this session")
    return answer_json(session.completions[cid])


# --- the control plane: /rl/... -----------------------------------------------------------


async def start_session(request: Request) -> dict[str, Any]:
    _admin(request)
    body = await _json(request)
    body = body if isinstance(body, dict) else {}
    started = await _gateway(request).start_session(body.get("task_id"), body.get("api_key"))
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
            _state(request).owned_completion(session, cid)
            session.completions.set_reward(cid, reward)
    except (UnknownCompletionError, ValueError) as exc:
        raise ProxyHTTPError(400, f"interaction_id: {exc}") from None
    return {"ok": True, "message": "success"}  # AReaL's reply is {"message": "success"}


async def end_session(request: Request) -> dict[str, Any]:
    count = _gateway(request).end_session(_session(request))
    return {"ok": True, "message": "success", "interaction_count": count}


# --- the trainer's admin routes and the proxy's own ---------------------------------------


async def grant_capacity(request: Request) -> dict[str, Any]:
    _admin(request)
    state = _state(request)
    state.capacity = (state.capacity or 0) + 1
    return {"capacity": state.capacity}


async def export(request: Request) -> dict[str, Any]:
    _admin(request)
    state = _state(request)
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


async def wait_for_session(request: Request) -> dict[str, Any]:
    _admin(request)
    return await completed_session(_gateway(request), await _json(request))


async def health(request: Request) -> dict[str, Any]:
    return {"status": "ok", "workers": 1, "sessions": len(_state(request).sessions)}


async def models(request: Request) -> dict[str, Any]:
    return models_list()


# --- the route tables ---------------------------------------------------------------------


def api_routes() -> list[BaseRoute]:
    """One POST route per path of each client API, all answered by :func:`api_answer`, and
    the token-count routes under the Messages and Responses paths (errors in their shapes)."""
    counts = ((MESSAGES, "/count_tokens", count_message_tokens),
              (RESPONSES, "/input_tokens", count_response_tokens))  # fmt: skip
    return [
        *(
            ProxyRoute(path, api_answer, methods=["POST"], api=api)
            for api in APIS.values()
            for path in api.routes
        ),
        *(
            ProxyRoute(path + suffix, endpoint, methods=["POST"], api=api)
            for api, suffix, endpoint in counts
            for path in api.routes
        ),
    ]


class RouteGroup(Mount):
    """Routes under one path prefix that answer nothing at the bare prefix.

    A plain ``Mount("/rl")`` matches ``/rl/``, so a request for ``/rl`` would be redirected
    there (307) and then refused; a group leaves both to the app's 404 as a flat route list does.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and get_route_path(scope) == f"{self.path}/":
            return Match.NONE, {}
        return super().matches(scope)


CONTROL_PLANE = RouteGroup(
    "/rl",
    routes=[
        ProxyRoute("/start_session", start_session, methods=["POST"]),
        ProxyRoute("/set_reward", set_reward, methods=["POST"]),
        ProxyRoute("/end_session", end_session, methods=["POST"]),
    ],
    name="rl",
)

PROXY_ROUTES: list[BaseRoute] = [
    ProxyRoute("/chat/completions/{cid}", get_completion, methods=["GET"]),
    ProxyRoute("/v1/chat/completions/{cid}", get_completion, methods=["GET"]),
    ProxyRoute("/grant_capacity", grant_capacity, methods=["POST"]),
    CONTROL_PLANE,
    ProxyRoute("/export_trajectories", export, methods=["POST"]),
    ProxyRoute("/internal/wait_for_session", wait_for_session, methods=["POST"]),
    ProxyRoute("/health", health, methods=["GET"]),
    ProxyRoute("/models", models, methods=["GET"]),
    ProxyRoute("/v1/models", models, methods=["GET"]),
]
