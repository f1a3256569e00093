# SPDX-License-Identifier: Apache-2.0
"""OpenAI-compatible proxy that records token-level data for agent workflows.

The names below load on first use (PEP 562): the session cache imports ``proxy.request`` for
the sample-id convention without pulling in the server, and the server imports the cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from areal_runtime.utils.lazy_exports import lazy_exports

_EXPORTS = {
    "AgentProxy": "agent_proxy",
    "ProxySession": "agent_proxy",
    "ProxyLimits": "limits",
    "RequestLimits": "limits",
    "ProxyState": "service",
    "create_proxy_app": "server",
    "SessionLimits": "sessions",
    "OpenAIProxyWorkflow": "workflow",
    "AgentProxyWorkflow": "agent_workflow",
    "proxy_workflow": "agent_workflow",
    "SessionGateway": "proxy_gateway",
}

if TYPE_CHECKING:
    from areal_runtime.experimental.openai.proxy.agent_proxy import AgentProxy, ProxySession
    from areal_runtime.experimental.openai.proxy.agent_workflow import (
        AgentProxyWorkflow,
        proxy_workflow,
    )
    from areal_runtime.experimental.openai.proxy.limits import ProxyLimits, RequestLimits
    from areal_runtime.experimental.openai.proxy.proxy_gateway import SessionGateway
    from areal_runtime.experimental.openai.proxy.server import create_proxy_app
    from areal_runtime.experimental.openai.proxy.service import ProxyState
    from areal_runtime.experimental.openai.proxy.sessions import SessionLimits
    from areal_runtime.experimental.openai.proxy.workflow import OpenAIProxyWorkflow


__getattr__, __dir__ = lazy_exports(__name__, {k: f".{v}" for k, v in _EXPORTS.items()})


__all__ = [
    "AgentProxy",
    "AgentProxyWorkflow",
    "OpenAIProxyWorkflow",
    "ProxyLimits",
    "ProxySession",
    "ProxyState",
    "RequestLimits",
    "SessionGateway",
    "SessionLimits",
    "create_proxy_app",
    "proxy_workflow",
]
