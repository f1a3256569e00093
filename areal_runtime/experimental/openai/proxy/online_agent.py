# SPDX-License-Identifier: Apache-2.0
"""``_OnlineAgent``: what ``OpenAIProxyWorkflow(mode="online")`` runs instead of an agent.

As in AReaL it registers the proxy as ready on the gateway and blocks until an outside client
ends a session there (``/rl/end_session``, or a refresh with the same key), then returns that
session's credentials for the export. It also sends the episode's task id, so the proxy's
engine records the outside session's completions under the episode that trains on them.
"""

from __future__ import annotations

from typing import Any

from areal_runtime import workflow_context
from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.proxy_gateway import (
    DEFAULT_WAIT_TIMEOUT_S,
    CompletedSessionInfo,
)

WAIT_FOR_SESSION_PATHNAME = "internal/wait_for_session"


class _OnlineAgent:
    """Waits for an outside session on the gateway; not for direct use (AReaL's name)."""

    def __init__(
        self, proxy_gateway_addr: str, admin_api_key: str, timeout: float = DEFAULT_WAIT_TIMEOUT_S
    ) -> None:
        self.proxy_gateway_addr = proxy_gateway_addr.rstrip("/")
        self.admin_api_key = admin_api_key
        self.timeout = timeout

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> CompletedSessionInfo:
        """``extra_kwargs["base_url"]`` is the proxy the session must be on."""
        import httpx

        client = await workflow_context.get_httpx_client()
        resp = await client.post(
            f"{self.proxy_gateway_addr}/{WAIT_FOR_SESSION_PATHNAME}",
            json={
                "worker_addr": extra_kwargs["base_url"],
                "task_id": workflow_context.get().task_id,
            },
            headers={"Authorization": f"Bearer {self.admin_api_key}"},
            timeout=httpx.Timeout(self.timeout + 5.0),
        )
        if resp.status_code >= 400:
            raise ProxyHTTPError(
                resp.status_code, f"waiting for an outside session failed: {resp.text[:300]}"
            )
        return CompletedSessionInfo(**resp.json())
