# SPDX-License-Identifier: Apache-2.0
"""``_OnlineAgent``: what ``OpenAIProxyWorkflow(mode="online")`` runs instead of an agent.

As in AReaL it registers the proxy as ready on the gateway and blocks until an outside client
ends a session there (``/rl/end_session``, or a refresh with the same key), then returns that
session's credentials for the export. It posts with the event loop's shared aiohttp session, as
AReaL does. Inside an episode it also sends the episode's task id, so the proxy's engine
records the outside session's completions under the episode that trains on them.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from areal_runtime import workflow_context
from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.proxy_gateway import (
    _DEFAULT_WAIT_TIMEOUT,
    INTERNAL_WAIT_FOR_SESSION_PATHNAME,
    CompletedSessionInfo,
)


class _OnlineAgent:
    """Waits for an outside session on the gateway; not for direct use (AReaL's name)."""

    def __init__(
        self, proxy_gateway_addr: str, admin_api_key: str, timeout: float = _DEFAULT_WAIT_TIMEOUT
    ) -> None:
        self.proxy_gateway_addr = proxy_gateway_addr
        self.admin_api_key = admin_api_key
        self.timeout = timeout

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> CompletedSessionInfo:
        """``extra_kwargs["base_url"]`` is the proxy the session must be on."""
        payload: dict[str, Any] = {"worker_addr": extra_kwargs["base_url"]}
        task_id = workflow_context.get().task_id
        if task_id is not None:
            payload["task_id"] = task_id
        session = await workflow_context.get_aiohttp_session()
        url = f"{self.proxy_gateway_addr.rstrip('/')}/{INTERNAL_WAIT_FOR_SESSION_PATHNAME}"
        async with session.post(
            url,
            json=payload,
            headers={"Authorization": f"Bearer {self.admin_api_key}"},
            # The gateway answers 408 after its own wait; the client waits a little longer.
            timeout=aiohttp.ClientTimeout(total=self.timeout + 5.0),
        ) as resp:
            if resp.status >= 400:
                text = await resp.text()
                try:
                    resp.raise_for_status()
                except Exception as exc:  # the gateway's reason, not just the status
                    raise ProxyHTTPError(
                        resp.status, f"waiting for an outside session failed: {exc}: {text[:300]}"
                    ) from exc
            result = await resp.json()
        return CompletedSessionInfo(**result)
