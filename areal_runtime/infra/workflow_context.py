# SPDX-License-Identifier: Apache-2.0
"""Alias of :mod:`areal_runtime.workflow_context` at AReaL's ``areal.infra`` path."""

from areal_runtime.workflow_context import (  # noqa: F401
    WorkflowContext,
    close_shared_clients,
    collecting_notes,
    get,
    get_aiohttp_session,
    get_httpx_client,
    get_sdk_http_client,
    note,
    reset,
    sdk_httpx,
    set,
    stat_scope,
)
