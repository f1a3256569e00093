# SPDX-License-Identifier: Apache-2.0
"""OpenAI-compatible proxy that records token-level data for agent workflows."""

from areal_runtime.experimental.openai.proxy.agent_proxy import AgentProxy, ProxySession
from areal_runtime.experimental.openai.proxy.agent_workflow import (
    AgentProxyWorkflow,
    proxy_workflow,
)
from areal_runtime.experimental.openai.proxy.limits import ProxyLimits
from areal_runtime.experimental.openai.proxy.server import ProxyState, create_proxy_app
from areal_runtime.experimental.openai.proxy.sessions import SessionLimits
from areal_runtime.experimental.openai.proxy.workflow import OpenAIProxyWorkflow

__all__ = [
    "AgentProxy",
    "AgentProxyWorkflow",
    "OpenAIProxyWorkflow",
    "ProxyLimits",
    "ProxySession",
    "ProxyState",
    "SessionLimits",
    "create_proxy_app",
    "proxy_workflow",
]
