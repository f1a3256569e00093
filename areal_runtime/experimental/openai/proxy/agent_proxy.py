# SPDX-License-Identifier: Apache-2.0
"""``AgentProxy``: run the proxy in-process for agent workflows, like AReaL's inline mode.

Both transports serve the app on a loopback port (``utils/asgi_host.py``, the host the engine
server uses too), and ``base_url`` is that port:
like AReaL's inline mode, an agent's child processes (the Claude Code CLI, a ``subprocess``, a
tool) reach the proxy with the URL and key the agent was given. ``transport="inline"`` also
hands agents an ``httpx.AsyncClient`` whose transport calls the ASGI app directly, so in-process
SDK calls skip the socket; ``transport="socket"`` hands them a normal client. Either way the
agent gets ``extra_kwargs = {base_url, http_client, api_key}`` and the real SDKs work.
"""

from __future__ import annotations

import contextlib
import inspect
import numbers
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from starlette.middleware import Middleware

from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.experimental.openai.cache import ExportStyle
from areal_runtime.experimental.openai.proxy.proxy_gateway import SessionGateway
from areal_runtime.experimental.openai.proxy.request import is_base_id
from areal_runtime.experimental.openai.proxy.server import ProxyState, create_proxy_app
from areal_runtime.experimental.openai.proxy.sessions import (
    DEFAULT_ADMIN_API_KEY,
    SessionData,
    SessionLimits,
)
from areal_runtime.experimental.openai.types import (
    ChatTemplateType,
    InteractionWithTokenLogpReward,
)
from areal_runtime.utils.asgi_host import ServedApp, serve_app
from areal_runtime.utils.network import is_loopback

INLINE_BASE_URL = "http://areal-proxy.invalid"


def reward_value(value: Any, what: str) -> float:
    """A float from an int/float/numpy scalar reward; anything else is a clear error."""
    if inspect.iscoroutine(value):
        value.close()  # handled here: no "never awaited" warning on top of this error
        raise TypeError(
            f"{what} is a coroutine that was never awaited: await it "
            "(return await self.async_reward_fn(...))"
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{what} must be a number (float, int or numpy scalar), got "
            f"{type(value).__name__} {value!r}"
        )
    return float(value)


class ProxySession:
    """One episode's view of the proxy: the kwargs for the agent, then rewards and export."""

    def __init__(self, proxy: AgentProxy, session: SessionData) -> None:
        self._proxy = proxy
        self._session = session

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def warnings(self) -> list[str]:
        """What went wrong without failing a request (a tool call that could not be parsed)."""
        return list(self._session.warnings)

    @property
    def completion_ids(self) -> list[str]:
        """The completions the agent received (one in flight or never delivered is left out)."""
        return [cid for cid in self._session.completions.delivered_ids() if is_base_id(cid)]

    @property
    def extra_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self._proxy.base_url,
            "http_client": self._proxy.http_client,
            "api_key": self._session.api_key,
        }

    def set_rewards(self, result: Any) -> None:
        """Apply what ``agent.run`` returned: a number for the last completion, or a dict."""
        cache = self._session.completions
        if isinstance(result, dict):
            for cid, value in result.items():
                cache.set_reward(cid, reward_value(value, f"the reward for {cid!r}"))
        elif result is None:
            raise TypeError(
                "the agent's run() returned None; return a float (reward of the last "
                "completion) or a dict {completion_id: reward}"
            )
        else:
            cache.set_last_reward(reward_value(result, "the agent's reward"))

    def export(
        self, turn_discount: float = 1.0, style: ExportStyle = "individual"
    ) -> dict[str, InteractionWithTokenLogpReward]:
        return self._session.export_interactions(turn_discount, style)


class AgentProxy:
    """An OpenAI-compatible proxy over ``engine``; an async context manager.

    The one host of the proxy app. ``online=True`` makes it an online trainer's gateway: no
    session starts but for an episode the trainer let in (capacity 0), and a new session waits
    for such an episode. ``middleware`` (Starlette ``Middleware`` entries) wraps the app for
    both transports: ``areal-devkit serve`` passes its request log.
    """

    def __init__(
        self,
        engine: Any,
        tokenizer: Any,
        *,
        transport: Literal["inline", "socket"] = "inline",
        host: str = "127.0.0.1",
        port: int = 0,
        admin_api_key: str | None = None,
        chat_template_type: ChatTemplateType = "hf",
        engine_max_tokens: int | None = None,
        limits: RequestLimits | None = None,
        session_limits: SessionLimits | None = None,
        online: bool = False,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        if transport not in ("inline", "socket"):
            raise ValueError(f"transport must be 'inline' or 'socket', got {transport!r}")
        # The socket is reachable by every local process: without a key of the caller's, the
        # proxy gets a random one, so nobody else can start sessions or read trajectories.
        key = secrets.token_urlsafe(24) if admin_api_key is None else admin_api_key
        if key == DEFAULT_ADMIN_API_KEY and not is_loopback(host):
            raise ValueError(
                f"refusing to serve the proxy on {host} with the default admin key: anyone on "
                "the network could read trajectories; pass admin_api_key=... or bind 127.0.0.1"
            )
        self.engine = engine
        self.admin_api_key = key
        self.transport = transport
        self.host, self.port = host, port
        self.state = ProxyState(
            engine,
            tokenizer,
            admin_api_key=key,
            chat_template_type=chat_template_type,
            engine_max_tokens=engine_max_tokens,
            limits=limits,
            session_limits=session_limits,
        )
        self.gateway = SessionGateway(self.state)  # session start/refresh/end, online episodes
        if online:  # a session starts only for an episode the staleness control let in
            self.state.capacity = 0
            self.gateway.online = True
        self.app = create_proxy_app(self.state, self.gateway, middleware=middleware)
        self.base_url = INLINE_BASE_URL
        self.http_client: Any = None
        self._served: ServedApp | None = None
        self._owns_client = False

    async def __aenter__(self) -> AgentProxy:
        from areal_runtime import workflow_context

        self.gateway.open()
        await self._serve()  # child processes of inline agents need a URL too
        if self.transport == "inline":
            httpx = workflow_context.sdk_httpx()
            self.http_client = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=self.app), base_url=INLINE_BASE_URL, timeout=3600
            )
            self._owns_client = True
        else:
            self.http_client = await workflow_context.get_sdk_http_client()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._owns_client and self.http_client is not None:
            await self.http_client.aclose()
        self.http_client = None
        self.gateway.close()  # episodes waiting for outside sessions would hold the server
        if self._served is not None:
            await self._served.close()
            self._served = None

    async def _serve(self) -> None:
        self._served = await serve_app(self.app, self.host, self.port)
        self.port = self._served.port
        self.base_url = self._served.base_url

    @contextlib.asynccontextmanager
    async def session(self, task_id: Any = None) -> AsyncIterator[ProxySession]:
        """A per-episode session with its own key; ended and forgotten on exit."""
        if self.http_client is None:
            raise RuntimeError("use the proxy inside `async with AgentProxy(...)`")
        session = self.state.start_session(task_id)
        session.managed = True  # removed below whatever happens: the sweep leaves it alone
        try:
            yield ProxySession(self, session)
        finally:
            self.state.end_session(session)
            self.state.remove_session(session)
