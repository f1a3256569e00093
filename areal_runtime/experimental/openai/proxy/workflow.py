# SPDX-License-Identifier: Apache-2.0
"""``OpenAIProxyWorkflow``: run a duck-typed agent as a RolloutWorkflow through the proxy."""

from __future__ import annotations

import inspect
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.experimental.openai.cache import ExportStyle
from areal_runtime.experimental.openai.proxy.agent_proxy import AgentProxy


def proxy_workflow(agent: Any, engine: Any, tokenizer: Any) -> OpenAIProxyWorkflow:
    """``agent`` as a workflow over its own in-process proxy on ``engine``.

    The one place where the executor and the test runner build an agent's proxy; enter
    ``workflow.proxy`` (an async context manager) around the episodes.
    """
    tokenizer = tokenizer or getattr(engine, "tokenizer", None)
    if tokenizer is None:
        raise ValueError(
            "an agent workflow needs a tokenizer for the proxy's chat template: pass "
            "tokenizer=... or use an engine that has one"
        )
    return OpenAIProxyWorkflow(agent, AgentProxy(engine, tokenizer))


class OpenAIProxyWorkflow(RolloutWorkflow):
    """Each episode: a session, ``agent.run(data, **extra_kwargs)``, rewards, export.

    The proxy's own engine serves the agent; the ``engine`` argument of ``arun_episode`` is
    ignored, as in AReaL. An episode with no completion returns ``None`` (rejected).
    """

    def __init__(
        self,
        agent: Any,
        proxy: AgentProxy,
        *,
        turn_discount: float = 1.0,
        export_style: ExportStyle = "individual",
    ) -> None:
        if not inspect.iscoroutinefunction(getattr(agent, "run", None)):
            raise TypeError(
                f"{type(agent).__name__} is not an agent: it needs "
                "`async def run(self, data, **extra_kwargs)`"
            )
        if not 0 < turn_discount <= 1:
            raise ValueError(f"turn_discount must be in (0, 1], got {turn_discount}")
        self.agent = agent
        self.proxy = proxy
        self.turn_discount = turn_discount
        self.export_style = export_style

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any] | None:
        from areal_runtime.utils.data import concat_padded_tensors

        async with self.proxy.session(workflow_context.get().task_id) as session:
            result = await self.agent.run(data, **session.extra_kwargs)
            if not session.completion_ids:
                return None
            for warning in session.warnings:
                workflow_context.note(warning)
            session.set_rewards(result)
            exported = session.export(self.turn_discount, self.export_style)
        return concat_padded_tensors([item.to_tensor_dict() for item in exported.values()])
