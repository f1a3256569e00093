# SPDX-License-Identifier: Apache-2.0
"""The client APIs the proxy speaks, one adapter module each; a new API is one line in ``APIS``."""

from __future__ import annotations

from areal_runtime.experimental.openai.proxy.apis.adapter import ApiAdapter
from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import MESSAGES
from areal_runtime.experimental.openai.proxy.apis.chat_completions import CHAT
from areal_runtime.experimental.openai.proxy.apis.responses import RESPONSES

APIS: dict[str, ApiAdapter] = {api.name: api for api in (CHAT, RESPONSES, MESSAGES)}


def api_for_path(path: str) -> ApiAdapter | None:
    """The adapter that answers ``path`` (a POST route), or None for the proxy's own routes."""
    return next((api for api in APIS.values() if path in api.routes), None)


__all__ = ["APIS", "ApiAdapter", "api_for_path"]
