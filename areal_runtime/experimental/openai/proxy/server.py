# SPDX-License-Identifier: Apache-2.0
"""The proxy's state and its Starlette app, with AReaL's routes and authentication.

Agents call ``/chat/completions`` (or ``/v1/chat/completions``) with their session key as a
Bearer token or ``x-api-key``. The trainer side uses the admin key for ``/grant_capacity``,
``/rl/start_session`` and ``/export_trajectories``; sessions use their own key for
``/rl/set_reward`` and ``/rl/end_session``. A session can never touch another's completions.
An answer is recorded only once it reached the agent (``delivery.py``), and the open sessions
are bounded (``sessions.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from areal_runtime import workflow_context
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.errors import InvalidRequestError, ProxyHTTPError, UnknownCompletionError
from areal_runtime.experimental.openai.cache import InteractionCache
from areal_runtime.experimental.openai.proxy.chat import (
    MODEL_NAME,
    ChatRequest,
    cap_new_tokens,
    chat_chunks,
    chat_completion,
    completion_id,
    parse_request,
    render_prompt,
)
from areal_runtime.experimental.openai.proxy.delivery import (
    ClientGone,
    DisconnectWatch,
    client_gone_response,
    tracked,
)
from areal_runtime.experimental.openai.proxy.generation import Generation, generation_of
from areal_runtime.experimental.openai.proxy.limits import (
    ProxyLimits,
    check_request_limits,
    read_json,
)
from areal_runtime.experimental.openai.proxy.messages_api import (
    message_events,
    message_id,
    message_object,
    parse_messages_request,
)
from areal_runtime.experimental.openai.proxy.proxy_gateway import (
    SessionGateway,
    completed_session,
    models_list,
)
from areal_runtime.experimental.openai.proxy.responses_api import (
    ResponsesRequest,
    parse_responses_request,
    response_events,
    response_id,
    response_object,
)
from areal_runtime.experimental.openai.proxy.sessions import DropLog, SessionLimits, drop_reason
from areal_runtime.experimental.openai.proxy.sse import sse_response
from areal_runtime.experimental.openai.types import (
    ChatTemplateType,
    InteractionWithTokenLogpReward,
)

DEFAULT_ADMIN_API_KEY = "areal-admin-key"
logger = logging.getLogger("areal_runtime.proxy")


@dataclass
class Session:
    session_id: str
    api_key: str
    task_id: Any
    cache: InteractionCache = field(default_factory=InteractionCache)
    finished: bool = False
    warnings: list[str] = field(default_factory=list)  # e.g. tool calls that could not be parsed
    last_active: float = 0.0  # the state's clock at the session's last request
    ended_at: float | None = None
    in_flight: int = 0  # requests generating now: a session busy generating is not idle
    # Held by AgentProxy.session(), which removes it on exit: never dropped by the sweep, so
    # an agent that waits long on a tool keeps its episode.
    managed: bool = False


class ProxyState:
    """Sessions, keys and the engine behind the proxy."""

    def __init__(
        self,
        engine: Any,
        tokenizer: Any,
        *,
        admin_api_key: str = DEFAULT_ADMIN_API_KEY,
        chat_template_type: ChatTemplateType = "hf",
        engine_max_tokens: int | None = None,
        limits: ProxyLimits | None = None,
        session_limits: SessionLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if tokenizer is None:
            raise ValueError("the proxy needs a tokenizer with a chat template")
        self.engine = engine
        self.tokenizer = tokenizer
        self.admin_api_key = admin_api_key
        self.chat_template_type = chat_template_type
        self.engine_max_tokens = engine_max_tokens
        self.limits = limits or ProxyLimits()
        self.session_limits = session_limits or SessionLimits()
        self.clock = clock
        self._last_sweep = clock()
        self.dropped = DropLog()
        self.sessions: dict[str, Session] = {}
        self._by_key: dict[str, Session] = {}
        self._owner: dict[str, Session] = {}
        self._counter = itertools.count()
        self.capacity: int | None = None

    def start_session(self, task_id: Any = None, *, api_key: str | None = None) -> Session:
        """A new session with a new key, or bound to ``api_key`` (the gateway's refresh/reuse)."""
        self.sweep()
        cap = self.session_limits.max_open_sessions
        if cap is not None and len(self.sessions) >= cap:
            self.sweep(force=True)
            if len(self.sessions) >= cap:
                raise ProxyHTTPError(
                    429,
                    f"{len(self.sessions)} sessions are open, the most SessionLimits."
                    f"max_open_sessions={cap} allows; export or end finished sessions, or "
                    "raise it (AgentProxy(..., session_limits=SessionLimits(...)))",
                )
        if self.capacity is not None:
            if self.capacity <= 0:
                raise ProxyHTTPError(429, "no capacity granted; call /grant_capacity first")
            self.capacity -= 1
        session = Session(
            f"{task_id}-{next(self._counter)}",
            api_key or "sk-" + secrets.token_hex(16),
            task_id,
            last_active=self.clock(),
        )
        self.sessions[session.session_id] = session
        self._by_key[session.api_key] = session
        return session

    def end_session(self, session: Session) -> None:
        if not session.finished:
            session.ended_at = self.clock()
        session.finished = True

    def sweep(self, *, force: bool = False) -> list[str]:
        """Drop sessions past their SessionLimits (at most once per sweep interval)."""
        now = self.clock()
        if not force and now - self._last_sweep < self.session_limits.sweep_interval_s:
            return []
        self._last_sweep = now
        dropped = []
        for session in list(self.sessions.values()):
            if session.managed:
                continue
            reason = drop_reason(
                self.session_limits,
                idle_s=now - session.last_active,
                ended_s=None if session.ended_at is None else now - session.ended_at,
                in_flight=session.in_flight > 0,
            )
            if reason is not None:
                logger.warning("dropped proxy session %s: %s", session.session_id, reason)
                self.dropped.add(session.session_id, session.api_key, reason)
                self.remove_session(session)
                dropped.append(session.session_id)
        return dropped

    def session_by_key(self, key: str) -> Session | None:
        """The session ``key`` is bound to now, if any (no side effects)."""
        return self._by_key.get(key)

    def remove_session(self, session: Session) -> None:
        self.sessions.pop(session.session_id, None)
        if self._by_key.get(session.api_key) is session:  # a refresh rebinds the key
            del self._by_key[session.api_key]
        for cid in session.cache.ids():
            self._owner.pop(cid.split("/")[0], None)

    def session_for(self, key: str | None) -> Session:
        if key is None:
            raise ProxyHTTPError(401, "missing API key: send 'Authorization: Bearer <session key>'")
        self.sweep()
        session = self._by_key.get(key)
        if session is None:
            raise ProxyHTTPError(401, self.dropped.get(key) or "invalid API key for this proxy")
        session.last_active = self.clock()
        return session

    def session_by_id(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            dropped = self.dropped.get(session_id)
            raise ProxyHTTPError(404, dropped or f"unknown session_id {session_id!r}")
        return session

    def check_admin(self, key: str | None) -> None:
        # As bytes: compare_digest refuses str with non-ASCII characters (a 500 otherwise).
        if key is None or not secrets.compare_digest(_utf8(key), _utf8(self.admin_api_key)):
            raise ProxyHTTPError(
                401 if key is None or key not in self._by_key else 403, "admin key required"
            )

    def owned_completion(self, session: Session, cid: Any) -> None:
        if not isinstance(cid, str):
            raise ProxyHTTPError(400, f"interaction_id must be a string, got {cid!r}")
        owner = self._owner.get(cid)
        if owner is not None and owner is not session:
            raise ProxyHTTPError(403, f"completion {cid!r} belongs to another session")

    async def complete(
        self, session: Session, req: ChatRequest, base_id: str
    ) -> tuple[list[int], list[Generation]]:
        """Generate ``req.n`` answers and record each as pending until it is delivered.

        Every API formats them afterwards; the app confirms or discards the record once it knows
        whether the answer reached the agent (``delivery.py``).
        """
        if session.finished:
            raise ProxyHTTPError(400, f"session {session.session_id} has ended")
        try:
            prompt = self._prompt(session, req)
            cap_new_tokens(req, len(prompt), self.engine_max_tokens)
        except InvalidRequestError as exc:
            raise ProxyHTTPError(400, str(exc)) from None
        token = _enter_episode(session)
        session.in_flight += 1
        try:
            responses = await asyncio.gather(
                *(
                    self.engine.agenerate(
                        ModelRequest(
                            input_ids=prompt, gconfig=req.gconfig, tokenizer=self.tokenizer
                        )
                    )
                    for _ in range(req.n)
                )
            )
        except ValueError as exc:  # the engine refused the request (e.g. the prompt is too long)
            raise ProxyHTTPError(400, f"the engine refused the request: {exc}") from None
        finally:
            session.in_flight -= 1
            session.last_active = self.clock()
            if token is not None:
                workflow_context.reset(token)
        generations = [
            generation_of(
                base_id if index == 0 else f"{base_id}/{index}",
                resp,
                self.tokenizer,
                parse_tools=req.tools is not None,
                stop=req.stop,
            )
            for index, resp in enumerate(responses)
        ]
        for g in generations:
            session.cache.add(
                InteractionWithTokenLogpReward(
                    interaction_id=g.interaction_id,
                    messages=req.messages,
                    model_response=g.response,
                    output_message=g.message,
                    chat_template_type=self.chat_template_type,
                    session_id=session.session_id,
                ),
                delivered=False,
            )
            session.warnings += [
                f"{g.interaction_id}: a tool call could not be parsed and was left in the "
                f"reply text: {problem}"
                for problem in g.malformed_tool_calls
            ]
        self._owner[base_id] = session
        return prompt, generations

    async def chat(self, session: Session, body: Any) -> tuple[dict[str, Any], ChatRequest]:
        """``/chat/completions``: the completion object and the parsed request."""
        check_request_limits(body, "chat", self.limits)
        req = _parsed(parse_request, body, self.tokenizer)
        cid = completion_id()
        prompt, generations = await self.complete(session, req, cid)
        completion = chat_completion(
            cid, int(time.time()), generations, len(prompt), self.tokenizer, req.logprobs
        )
        completion["model"] = _requested_model(body)
        session.cache[cid].completion = completion
        return completion, req

    async def responses(
        self, session: Session, body: Any
    ) -> tuple[dict[str, Any], ResponsesRequest]:
        """``/responses``: the response object and the parsed request."""
        check_request_limits(body, "responses", self.limits)
        previous = body.get("previous_response_id") if isinstance(body, dict) else None
        history = self._history(session, previous) if previous is not None else None
        req = _parsed(parse_responses_request, body, self.tokenizer, history)
        rid = response_id()
        prompt, generations = await self.complete(session, req.chat, rid)
        response = response_object(rid, generations[0], req, len(prompt))
        response["model"] = _requested_model(body)
        session.cache[rid].completion = response
        return response, req

    async def messages(self, session: Session, body: Any) -> tuple[dict[str, Any], ChatRequest]:
        """``/v1/messages``: the Anthropic message object and the parsed request."""
        check_request_limits(body, "messages", self.limits)
        req = _parsed(parse_messages_request, body, self.tokenizer)
        mid = message_id()
        prompt, generations = await self.complete(session, req, mid)
        message = message_object(mid, generations[0], len(prompt), _requested_model(body))
        session.cache[mid].completion = message
        return message, req

    def discard(self, session: Session, base_id: str) -> None:
        """Forget an answer the agent never received (its client left before delivery)."""
        session.cache.discard(base_id)
        if self._owner.get(base_id) is session:
            del self._owner[base_id]

    def _history(self, session: Session, previous: Any) -> list[dict[str, Any]]:
        """The conversation up to and including the answer ``previous`` names."""
        if not isinstance(previous, str) or previous not in session.cache:
            if isinstance(previous, str):
                self.owned_completion(session, previous)
            raise ProxyHTTPError(
                400, f"previous_response_id {previous!r} names no response of this session"
            )
        item = session.cache[previous]
        return [*item.messages, dict(item.output_message or {})]

    def _prompt(self, session: Session, req: Any) -> list[int]:
        if self.chat_template_type != "concat" or not len(session.cache):
            return render_prompt(self.tokenizer, req)
        parent = session.cache.find_parent(req.messages)
        if parent is None or parent.model_response is None:
            return render_prompt(self.tokenizer, req)
        base = parent.model_response.input_tokens + parent.model_response.output_tokens
        new_messages = req.messages[len(parent.messages) + 1 :]
        tail = self.tokenizer.apply_chat_template(
            new_messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        return list(base) + list(tail)


def _parsed(parse: Any, *args: Any) -> Any:
    """Run a request parser; its InvalidRequestError is the agent's HTTP 400."""
    try:
        return parse(*args)
    except InvalidRequestError as exc:
        raise ProxyHTTPError(400, str(exc)) from None


def _enter_episode(session: Session) -> Any:
    """Run the engine call under the session's episode, or None if it already is.

    The inline transport keeps the agent's context, but a socket request arrives in uvicorn's
    context, so per-episode engine wrappers (``RecordingEngine``) would see no task id.
    """
    current = workflow_context.get()
    if session.task_id is None or current.task_id == session.task_id:
        return None
    return workflow_context.set(
        workflow_context.WorkflowContext(is_eval=current.is_eval, task_id=session.task_id)
    )


def _requested_model(body: Any) -> str:
    """The model name the request asked for, echoed in the reply (clients compare them)."""
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else MODEL_NAME


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _finite_number(value: Any) -> bool:
    """An int or float that is a finite float (a 400-digit int overflows the trainer's)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _key_of(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-api-key")


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
}


def _error(status: int, message: str, *, anthropic: bool = False) -> JSONResponse:
    """An error body the SDK of the route understands (OpenAI's or Anthropic's shape)."""
    kind = _ERROR_TYPES.get(status, "api_error" if anthropic else "server_error")
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    if anthropic:
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "code": status}}
    return JSONResponse(body, status_code=status)


def create_proxy_app(state: ProxyState, gateway: SessionGateway | None = None) -> Starlette:
    """The ASGI app: serve it with uvicorn or drive it with ``httpx.ASGITransport``."""
    gateway = gateway or SessionGateway(state)

    async def _json(request: Request) -> Any:
        return await read_json(request, state.limits)

    def handler(fn: Any, *, anthropic: bool = False) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                result = await fn(request)
                return result if isinstance(result, Response) else JSONResponse(result)
            except ProxyHTTPError as exc:
                return _error(exc.status, str(exc), anthropic=anthropic)
            except Exception as exc:  # the agent sees an error body, not a hang
                return _error(500, f"{type(exc).__name__}: {exc}", anthropic=anthropic)

        return endpoint

    async def delivered(request: Request, generate: Any, render: Any) -> Response:
        """Generate while the client is connected; keep the record only if it got the answer."""
        session = state.session_for(_key_of(request))
        body = await _json(request)
        watch = DisconnectWatch(request)
        try:
            answer, req = await watch.run(generate(session, body))
        except ClientGone:
            await watch.close()
            return client_gone_response()
        except BaseException:
            await watch.close()
            raise
        base_id = answer["id"]
        return tracked(
            render(answer, req),
            watch,
            on_delivered=lambda: session.cache.mark_delivered(base_id),
            on_lost=lambda: state.discard(session, base_id),
        )

    def render_chat(completion: dict[str, Any], req: ChatRequest) -> Response:
        if not req.stream:
            return JSONResponse(completion)
        chunks = chat_chunks(completion, req.include_usage)
        return sse_response(((None, c) for c in chunks), done_marker=True)

    def render_response(response: dict[str, Any], req: ResponsesRequest) -> Response:
        return (
            sse_response(response_events(response)) if req.chat.stream else JSONResponse(response)
        )

    def render_message(message: dict[str, Any], req: ChatRequest) -> Response:
        return sse_response(message_events(message)) if req.stream else JSONResponse(message)

    async def chat(request: Request) -> Response:
        return await delivered(request, state.chat, render_chat)

    async def responses(request: Request) -> Response:
        return await delivered(request, state.responses, render_response)

    async def messages(request: Request) -> Response:
        return await delivered(request, state.messages, render_message)

    async def get_completion(request: Request) -> dict[str, Any]:
        session = state.session_for(_key_of(request))
        cid = request.path_params["cid"]
        state.owned_completion(session, cid)
        if cid not in session.cache:
            raise ProxyHTTPError(404, f"no completion {cid!r} in this session")
        return session.cache[cid].completion or {}

    async def grant_capacity(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        state.capacity = (state.capacity or 0) + 1
        return {"capacity": state.capacity}

    async def start_session(request: Request) -> dict[str, Any]:
        state.check_admin(_key_of(request))
        body = await _json(request)
        body = body if isinstance(body, dict) else {}
        session = await gateway.start_session(body.get("task_id"), body.get("api_key"))
        return {"session_id": session.session_id, "api_key": session.api_key}

    async def set_reward(request: Request) -> dict[str, Any]:
        session = state.session_for(_key_of(request))
        body = await _json(request)
        if not isinstance(body, dict) or "reward" not in body:
            raise ProxyHTTPError(400, "body must be {interaction_id: str | null, reward: number}")
        reward, cid = body["reward"], body.get("interaction_id")
        if not _finite_number(reward):
            raise ProxyHTTPError(400, f"reward must be a finite number, got {reward!r}")
        try:
            if cid is None:
                session.cache.set_last_reward(reward)
            else:
                state.owned_completion(session, cid)
                session.cache.set_reward(cid, reward)
        except (UnknownCompletionError, ValueError) as exc:
            raise ProxyHTTPError(400, f"interaction_id: {exc}") from None
        return {"ok": True}

    async def end_session(request: Request) -> dict[str, Any]:
        count = gateway.end_session(state.session_for(_key_of(request)))
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
        if not isinstance(session_id, str):
            raise ProxyHTTPError(400, f"session_id must be a string, got {session_id!r}")
        session = state.session_by_id(session_id)
        discount = body.get("discount", 1.0)
        if not _finite_number(discount) or not 0 <= discount <= 1:
            raise ProxyHTTPError(400, f"discount must be a number in [0, 1], got {discount!r}")
        try:  # checks the style before the discount changes the session's rewards
            exported = session.cache.export(body.get("style", "individual"))
        except ValueError as exc:
            raise ProxyHTTPError(400, f"style: {exc}") from None
        session.cache.apply_reward_discount(float(discount))
        state.remove_session(session)
        return {
            cid: {k: v.tolist() for k, v in item.to_tensor_dict().items()}
            for cid, item in exported.items()
        }

    routes = [
        Route(path, handler(chat), methods=["POST"])
        for path in ("/chat/completions", "/v1/chat/completions")
    ]
    routes += [
        Route(path, handler(responses), methods=["POST"])
        for path in ("/responses", "/v1/responses")
    ]
    routes.append(Route("/v1/messages", handler(messages, anthropic=True), methods=["POST"]))
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
        return _error(status, message, anthropic=request.url.path == "/v1/messages")

    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})
