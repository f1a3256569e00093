# SPDX-License-Identifier: Apache-2.0
"""``DaytonaClientManager`` at AReaL's path: one Daytona client per process and event loop.

The SDK is imported on first use, so this module (and the TIR example's tools) import where
``daytona`` is not installed; ``get_client`` then raises an ImportError saying what to do. The
imported classes are kept in the module globals ``AsyncDaytona`` / ``DaytonaConfig`` (as in
AReaL), which is also where tests put fakes. The client is closed at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import weakref
from typing import Any, ClassVar

INSTALL_HINT = (
    "the Daytona SDK is not installed: `pip install daytona` (and set DAYTONA_API_KEY), or run "
    "code locally with areal_runtime.infra.sandbox.LocalRunner"
)

# Filled by ``_load_daytona_sdk`` on first use; None until then.
AsyncDaytona: Any = None
DaytonaConfig: Any = None


def _load_daytona_sdk() -> tuple[Any, Any]:
    """``(AsyncDaytona, DaytonaConfig)``; ImportError with the fix when the SDK is missing."""
    global AsyncDaytona, DaytonaConfig
    if AsyncDaytona is None or DaytonaConfig is None:
        try:
            from daytona import AsyncDaytona as sdk_client
            from daytona import DaytonaConfig as sdk_config
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        AsyncDaytona, DaytonaConfig = sdk_client, sdk_config
    return AsyncDaytona, DaytonaConfig


class DaytonaClientManager:
    """The process's AsyncDaytona client, rebuilt when the caller's event loop changes (the
    SDK's HTTP session belongs to the loop that created it)."""

    _client: ClassVar[Any] = None
    _loop: ClassVar[asyncio.AbstractEventLoop | None] = None
    _config_overrides: ClassVar[dict[str, Any]] = {}
    _atexit_registered: ClassVar[bool] = False
    # One lock per event loop: an asyncio.Lock may only be awaited on the loop it first waited on.
    _locks: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]] = (
        weakref.WeakKeyDictionary()
    )

    @classmethod
    def configure(cls, **config_kwargs: Any) -> None:
        """DaytonaConfig keyword arguments for the client; only before the first one exists."""
        if cls._client is not None:
            raise RuntimeError("DaytonaClientManager is already initialized; configure it first")
        cls._config_overrides = dict(config_kwargs)

    @classmethod
    def config_overrides(cls) -> dict[str, Any]:
        return dict(cls._config_overrides)

    @classmethod
    def active_loop(cls) -> asyncio.AbstractEventLoop | None:
        loop = cls._loop
        return loop if loop is not None and loop.is_running() else None

    @classmethod
    def _lock(cls) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = cls._locks.get(loop)
        if lock is None:
            lock = cls._locks[loop] = asyncio.Lock()
        return lock

    @classmethod
    async def get_client(cls) -> Any:
        loop = asyncio.get_running_loop()
        async with cls._lock():
            if cls._client is None or cls._loop is not loop or cls._loop.is_closed():
                await cls._close_client()
                async_daytona, config_cls = _load_daytona_sdk()
                config = config_cls(connection_pool_maxsize=None, **cls._config_overrides)
                cls._client, cls._loop = async_daytona(config), loop
                if not cls._atexit_registered:
                    atexit.register(cls._close_at_exit)
                    cls._atexit_registered = True
            return cls._client

    @classmethod
    async def close(cls) -> None:
        """Close the client (no-op when there is none); safe to call twice."""
        async with cls._lock():
            await cls._close_client()

    @classmethod
    async def _close_client(cls) -> None:
        client, owner = cls._client, cls._loop
        cls._client, cls._loop = None, None
        if client is None:
            return
        if owner is not None and owner.is_running() and owner is not asyncio.get_running_loop():
            # The session belongs to another (still running) loop: close it there.
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(client.close(), owner))
        else:
            await client.close()

    @classmethod
    def _close_at_exit(cls) -> None:
        """atexit hook: an unclosed aiohttp session would warn at shutdown."""
        # Interpreter shutdown: nothing is left to report a failure to.
        with contextlib.suppress(Exception):
            asyncio.run(cls.close())
