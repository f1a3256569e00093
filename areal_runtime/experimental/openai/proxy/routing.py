# SPDX-License-Identifier: Apache-2.0
"""How the proxy's endpoints meet HTTP: their route type and the one place errors become bodies.

An endpoint is a plain ``async def (request) -> dict | Response``. It refuses a request by
raising :class:`~areal_runtime.errors.ProxyHTTPError`; :func:`proxy_error` (registered in the
app's ``exception_handlers``) turns that into the error body the route's SDK understands, and
:func:`http_error` does the same for unknown paths and wrong methods. :class:`ProxyRoute` gives
each request its :class:`ParsedRequest` and turns an unexpected exception into a typed 500, so
an agent sees an error body instead of a dropped connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.apis import APIS, ApiAdapter, api_for_path
from areal_runtime.experimental.openai.proxy.apis.adapter import error_response
from areal_runtime.experimental.openai.proxy.sessions import SessionData

Endpoint = Callable[[Request], Awaitable[dict[str, Any] | Response]]


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


def parsed_request(request: Request) -> ParsedRequest:
    """The request's :class:`ParsedRequest`; a fresh one where no proxy route made it."""
    parsed = getattr(request.state, "proxy_request", None)
    if parsed is None:
        parsed = request.state.proxy_request = ParsedRequest(None)
    return parsed


class ProxyRoute(Route):
    """A route to a proxy endpoint; ``api`` is the adapter whose error shape it answers in."""

    def __init__(
        self,
        path: str,
        endpoint: Endpoint,
        *,
        methods: Sequence[str],
        api: ApiAdapter | None = None,
    ) -> None:
        name = api.name if api is not None else None

        async def run(request: Request) -> Response:
            request.state.proxy_request = ParsedRequest(name)
            try:
                result = await endpoint(request)
            except ProxyHTTPError:
                raise
            except Exception as exc:  # the agent sees an error body, not a hang
                raise ProxyHTTPError(500, f"{type(exc).__name__}: {exc}") from exc
            return result if isinstance(result, Response) else JSONResponse(result)

        super().__init__(path, run, methods=list(methods), name=endpoint.__name__)


async def proxy_error(request: Request, exc: Exception) -> Response:
    """A refusal raised by an endpoint or the service: its status, in the route's error shape."""
    assert isinstance(exc, ProxyHTTPError)
    parsed = parsed_request(request)
    parsed.error = str(exc)
    api = APIS.get(parsed.api) if parsed.api is not None else None
    return error_response(exc.status, parsed.error, api)


async def http_error(request: Request, exc: Exception) -> Response:
    """Unknown paths and wrong methods: the same JSON error shape as every other refusal."""
    status = getattr(exc, "status_code", 400)
    detail = getattr(exc, "detail", "") or "refused"
    message = f"{request.method} {request.url.path}: {detail}"
    if status == 404 and not request.url.path.startswith("/rl"):
        # e.g. a client on OpenAI's legacy /v1/completions or /v1/embeddings
        served = ", ".join(api.routes[0] for api in APIS.values())
        message += f" (the proxy's model APIs are POST {served}: use one of them)"
    request.state.proxy_request = ParsedRequest(None, error=message)
    return error_response(status, message, api_for_path(request.url.path))


EXCEPTION_HANDLERS = {ProxyHTTPError: proxy_error, HTTPException: http_error}
