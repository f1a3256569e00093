# SPDX-License-Identifier: Apache-2.0
"""Per-episode context and shared HTTP clients (AReaL's ``areal.infra.workflow_context``).

Fixes over AReaL: clients are kept per *event loop* (AReaL keys them per thread, so a fresh
pytest-asyncio loop per test logs "Event loop changed" and closes clients from the wrong loop),
they are closed when their loop closes, recreated if a caller closed them, and sized for
hundreds of concurrent episodes instead of httpx's default 100 connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_CONNECTIONS = 1024
REQUEST_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class WorkflowContext:
    """What the executor tells an episode about itself; inherited by tasks it spawns."""

    is_eval: bool = False
    task_id: int | None = None


_current: contextvars.ContextVar[WorkflowContext] = contextvars.ContextVar(
    "areal_runtime_workflow_context",
    default=WorkflowContext(),  # noqa: B039 - frozen, so sharing it is safe
)


def set(ctx: WorkflowContext) -> contextvars.Token:
    """Set the context for the current task (and the tasks it creates)."""
    if not isinstance(ctx, WorkflowContext):
        raise TypeError(f"expected a WorkflowContext, got {type(ctx).__name__}")
    return _current.set(ctx)


def get() -> WorkflowContext:
    return _current.get()


def reset(token: contextvars.Token) -> None:
    """Restore the context that was current before the ``set`` that returned ``token``."""
    _current.reset(token)


_notes: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "areal_runtime_episode_notes", default=None
)


def note(text: str) -> None:
    """Tell the episode's report something that did not fail the episode.

    The proxy notes tool calls it could not parse; a workflow may note anything a person
    should see in ``areal-devkit run``. Outside an executor episode it does nothing.
    """
    notes = _notes.get()
    if notes is not None:
        notes.append(str(text))


def collecting() -> bool:
    """Whether the current code runs inside an episode whose notes are being gathered."""
    return _notes.get() is not None


@contextlib.contextmanager
def collecting_notes() -> Iterator[list[str]]:
    """Gather the notes of the code run inside (and the tasks it starts) into a list."""
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def stat_scope() -> str:
    """The stats scope AReaL workflows log under: ``eval-rollout`` or ``rollout``."""
    return "eval-rollout" if get().is_eval else "rollout"


def sdk_httpx() -> Any:
    """The httpx module whose clients the installed LLM SDKs accept as ``http_client``.

    The current OpenAI (3.x) and Anthropic (2.x) SDKs are built on ``httpx2``, and Anthropic
    refuses anything else; older majors (OpenAI 1.x/2.x, Anthropic 0.x) are built on ``httpx``
    and refuse ``httpx2``. So: ``httpx2`` when an installed SDK depends on it, else ``httpx``.
    """
    global _SDK_HTTPX
    if _SDK_HTTPX is None:
        from importlib.metadata import PackageNotFoundError, requires

        wants_httpx2 = False
        for sdk in ("openai", "anthropic"):
            try:
                wants_httpx2 |= any(r.startswith("httpx2") for r in requires(sdk) or [])
            except PackageNotFoundError:
                continue
        if wants_httpx2:
            import httpx2 as module
        else:
            import httpx as module
        _SDK_HTTPX = module
    return _SDK_HTTPX


_SDK_HTTPX: Any = None


class _LoopClients:
    """The shared clients of one event loop."""

    def __init__(self) -> None:
        self.httpx: Any = None
        self.sdk: Any = None
        self.aiohttp: Any = None

    async def aclose(self) -> None:
        for client in (self.httpx, self.sdk):
            if client is not None and not client.is_closed:
                await client.aclose()
        if self.aiohttp is not None and not self.aiohttp.closed:
            await self.aiohttp.close()
        self.httpx = self.sdk = self.aiohttp = None


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = (
    weakref.WeakKeyDictionary()
)


def _clients_for_running_loop() -> _LoopClients:
    loop = asyncio.get_running_loop()
    clients = _clients.get(loop)
    if clients is None:
        clients = _clients[loop] = _LoopClients()
        _close_with_loop(loop, clients)
    return clients


def _close_with_loop(loop: asyncio.AbstractEventLoop, clients: _LoopClients) -> None:
    """Close the clients before ``loop.close()`` so no "Unclosed client session" is reported.

    ``asyncio.run`` and pytest-asyncio call ``shutdown_asyncgens`` and then ``close``; wrapping
    ``close`` is the one hook every loop runner goes through.
    """
    original_close = loop.close

    def close() -> None:
        if not loop.is_closed() and any(
            c is not None for c in (clients.httpx, clients.sdk, clients.aiohttp)
        ):
            if loop.is_running():
                raise RuntimeError("cannot close a running event loop")
            loop.run_until_complete(clients.aclose())
        _clients.pop(loop, None)
        original_close()

    loop.close = close  # type: ignore[method-assign]


async def get_httpx_client() -> Any:
    """The event loop's shared ``httpx.AsyncClient``, for agents (``http_client=...``)."""
    import httpx

    clients = _clients_for_running_loop()
    if clients.httpx is None or clients.httpx.is_closed:
        clients.httpx = httpx.AsyncClient(
            timeout=httpx.Timeout(REQUEST_TIMEOUT_S),
            limits=httpx.Limits(
                max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS // 4
            ),
        )
    return clients.httpx


async def get_sdk_http_client() -> Any:
    """The event loop's shared client for LLM SDKs (``http_client=`` of AsyncOpenAI,
    AsyncAnthropic): an ``httpx2.AsyncClient`` or ``httpx.AsyncClient``, see :func:`sdk_httpx`."""
    module = sdk_httpx()
    clients = _clients_for_running_loop()
    if clients.sdk is None or clients.sdk.is_closed:
        clients.sdk = module.AsyncClient(
            timeout=module.Timeout(REQUEST_TIMEOUT_S),
            limits=module.Limits(
                max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS // 4
            ),
        )
    return clients.sdk


async def get_aiohttp_session() -> Any:
    """The event loop's shared ``aiohttp.ClientSession``, for engine HTTP calls."""
    import aiohttp

    clients = _clients_for_running_loop()
    if clients.aiohttp is None or clients.aiohttp.closed:
        clients.aiohttp = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
            read_bufsize=10 * 1024 * 1024,
            connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=0),
        )
    return clients.aiohttp


async def close_shared_clients() -> None:
    """Close the running loop's shared clients now (they are recreated on next use)."""
    clients = _clients.get(asyncio.get_running_loop())
    if clients is not None:
        await clients.aclose()
