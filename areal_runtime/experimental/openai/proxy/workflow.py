# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``OpenAIProxyWorkflow``: an agent episode against a proxy reached by URL.

Same constructor as AReaL's (``mode, agent, proxy_addr, admin_api_key, discount, export_style,
subproc_max_workers, proxy_gateway_addr``) and the same protocol over HTTP: grant capacity,
start a session, run the agent with ``base_url=proxy_addr`` and the session key, set the
rewards it returns, end the session, export. ``mode="online"`` runs no agent: it waits on the
gateway (``proxy_gateway_addr``) for a session an outside client ends or refreshes, and exports
that one. The proxy is ``areal-devkit serve`` or the gateway of an online training run; the
executor wraps agents in the in-process :class:`AgentProxyWorkflow` instead (no URL needed).
"""

from __future__ import annotations

import inspect
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.errors import ProxyHTTPError
from areal_runtime.experimental.openai.proxy.agent_proxy import reward_value
from areal_runtime.experimental.openai.proxy.agent_workflow import (
    AgentProxyWorkflow,
    pickled_runner,
    proxy_workflow,
    run_in_worker,
)
from areal_runtime.experimental.openai.proxy.server import DEFAULT_ADMIN_API_KEY

MODES = ("inline", "subproc", "online")
EXPORT_STYLES = ("individual", "concat")
SUBPROC_TIMEOUT_S = 600.0

__all__ = ["AgentProxyWorkflow", "OpenAIProxyWorkflow", "proxy_workflow"]


class OpenAIProxyWorkflow(RolloutWorkflow):
    """One episode per call through the proxy at ``proxy_addr`` (AReaL's constructor)."""

    def __init__(
        self,
        mode: str,
        agent: Any | None = None,
        proxy_addr: str = "",
        admin_api_key: str = DEFAULT_ADMIN_API_KEY,
        discount: float = 1.0,
        export_style: str = "individual",
        subproc_max_workers: int = 4,
        proxy_gateway_addr: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if export_style not in EXPORT_STYLES:
            raise ValueError(
                f"export_style must be one of {list(EXPORT_STYLES)}, got {export_style!r}"
            )
        if not 0 < discount <= 1:
            raise ValueError(f"discount must be in (0, 1], got {discount}")
        if mode == "online":
            if proxy_gateway_addr is None:
                raise ValueError(
                    "mode='online' needs proxy_gateway_addr: the gateway outside clients start "
                    "their sessions on (the address an online training run prints)"
                )
            from areal_runtime.experimental.openai.proxy.online_agent import _OnlineAgent

            agent = _OnlineAgent(proxy_gateway_addr, admin_api_key)
        elif agent is None:
            raise ValueError(f"mode={mode!r} needs an agent with `async def run(self, data, **kw)`")
        elif not inspect.iscoroutinefunction(getattr(agent, "run", None)):
            raise TypeError(
                f"{type(agent).__name__} is not an agent: it needs "
                "`async def run(self, data, **extra_kwargs)`"
            )
        self.mode = mode
        self.agent = agent
        self.proxy_addr = proxy_addr.rstrip("/")
        self.proxy_gateway_addr = proxy_gateway_addr
        self._admin_api_key = admin_api_key
        self.discount = float(discount)
        self.export_style = export_style
        self.subproc_max_workers = subproc_max_workers
        self._runner = pickled_runner(agent) if mode == "subproc" else b""

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any] | None:
        """The episode's trajectory (a padded batch), or None when no completion was made."""
        if not self.proxy_addr:
            raise ValueError(
                "OpenAIProxyWorkflow has no proxy_addr: pass the URL of a running proxy "
                "(areal-devkit serve prints it), or give the agent itself to the trainer"
            )
        client = await workflow_context.get_httpx_client()
        admin = self._admin_api_key
        await self._post(client, "grant_capacity", admin, {})
        if self.mode == "online":
            info = await self.agent.run(
                data, base_url=self.proxy_addr, http_client=client, api_key=admin
            )
            session_id = info.session_id
        else:
            task_id = workflow_context.get().task_id
            started = await self._post(client, "rl/start_session", admin, {"task_id": str(task_id)})
            session_id, key = started["session_id"], started["api_key"]
            try:
                result = await self._run_agent(data, key)
                await self._set_rewards(client, key, result)
            finally:
                await self._post(client, "rl/end_session", key, {})
        exported = await self._post(
            client,
            "export_trajectories",
            admin,
            {"session_id": session_id, "discount": self.discount, "style": self.export_style},
        )
        if not exported.get("interactions"):
            workflow_context.note(
                f"session {session_id} has no completion: no request reached {self.proxy_addr} "
                "with its key, so the episode is rejected"
            )
            return None
        return _batch(exported)

    async def _run_agent(self, data: dict[str, Any], api_key: str) -> Any:
        if self.mode == "subproc":
            return await run_in_worker(
                self._runner,
                type(self.agent).__name__,
                data,
                self.proxy_addr,
                api_key,
                max_workers=self.subproc_max_workers,
                timeout_s=SUBPROC_TIMEOUT_S,
            )
        http_client = await workflow_context.get_sdk_http_client()
        return await self.agent.run(
            data, base_url=self.proxy_addr, http_client=http_client, api_key=api_key
        )

    async def _set_rewards(self, client: Any, api_key: str, result: Any) -> None:
        for body in set_reward_bodies(result):
            await self._post(client, "rl/set_reward", api_key, body)

    async def _post(self, client: Any, path: str, key: str, body: dict[str, Any]) -> Any:
        resp = await client.post(
            f"{self.proxy_addr}/{path}", json=body, headers={"Authorization": f"Bearer {key}"}
        )
        if resp.status_code >= 400:
            raise ProxyHTTPError(
                resp.status_code, f"POST {self.proxy_addr}/{path}: {_error_text(resp)}"
            )
        return resp.json()


def set_reward_bodies(result: Any) -> list[dict[str, Any]]:
    """The ``/rl/set_reward`` bodies for what ``agent.run`` returned (a number or a dict)."""
    if isinstance(result, dict):
        return [
            {"interaction_id": cid, "reward": reward_value(value, f"the reward for {cid!r}")}
            for cid, value in result.items()
        ]
    if result is None:
        raise TypeError(
            "the agent's run() returned None; return a float (reward of the last "
            "completion) or a dict {completion_id: reward}"
        )
    return [{"reward": reward_value(result, "the agent's reward")}]


def _batch(exported: dict[str, Any]) -> dict[str, Any]:
    """The export (AReaL's wire format) as one padded tensor batch."""
    from areal_runtime.experimental.openai.proxy.export_format import tensor_dicts
    from areal_runtime.utils.data import concat_padded_tensors

    return concat_padded_tensors(tensor_dicts(exported))


def _error_text(resp: Any) -> str:
    try:
        return str(resp.json()["error"]["message"])
    except Exception:
        return resp.text[:300] or f"HTTP {resp.status_code}"
