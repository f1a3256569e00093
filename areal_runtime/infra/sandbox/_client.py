# SPDX-License-Identifier: Apache-2.0
"""``DaytonaClientManager`` at AReaL's path: one Daytona client per process and event loop.

The SDK is imported on first use, so this module (and the TIR example's tools) import where
``daytona`` is not installed; ``get_client`` then raises an ImportError saying what to do.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

INSTALL_HINT = (
    "the Daytona SDK is not installed: `pip install daytona` (and set DAYTONA_API_KEY), or run "
    "code locally with areal_runtime.infra.sandbox.LocalRunner"
)


def _load_daytona_sdk() -> tuple[Any, Any]:
    """``(AsyncDaytona, DaytonaConfig)``; ImportError with the fix when the SDK is missing."""
    try:
        from daytona import AsyncDaytona, DaytonaConfig
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return AsyncDaytona, DaytonaConfig


class DaytonaClientManager:
    """The process's AsyncDaytona client, rebuilt when the caller's event loop changes (the
    SDK's HTTP session belongs to the loop that created it)."""

    _client: ClassVar[Any] = None
    _loop: ClassVar[asyncio.AbstractEventLoop | None] = None
    _config_overrides: ClassVar[dict[str, Any]] = {}

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
    async def get_client(cls) -> Any:
        loop = asyncio.get_running_loop()
        if cls._client is None or cls._loop is not loop:
            await cls.close()
            async_daytona, config_cls = _load_daytona_sdk()
            config = config_cls(connection_pool_maxsize=None, **cls._config_overrides)
            cls._client, cls._loop = async_daytona(config), loop
        return cls._client

    @classmethod
    async def close(cls) -> None:
        client, cls._client, cls._loop = cls._client, None, None
        if client is not None:
            await client.close()
