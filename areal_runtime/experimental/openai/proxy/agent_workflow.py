# SPDX-License-Identifier: Apache-2.0
"""``AgentProxyWorkflow``: run a duck-typed agent as a RolloutWorkflow through an in-process proxy.

What the executor and ``run_episode`` wrap an agent in (AReaL's ``AgentProxyWorkflow``, which
talks to a proxy by URL, is in ``workflow.py``).

``mode="inline"`` awaits ``agent.run`` on the executor's event loop (AReaL's inline mode).
``mode="subproc"`` (AReaL's subprocess mode) runs it in a pool of worker processes, for agents
that block or own their event loop: each call is ``asyncio.run(agent.run(data, ...))`` in a
worker that reaches the proxy over loopback (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` and the
``*_API_KEY`` variables are set as in AReaL, and ``base_url`` / ``api_key`` are passed too). A
worker that crashes or runs past ``subproc_timeout_s`` fails that episode with a clear error and
is replaced; the reward comes back as the return value, as inline.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import pickle
from typing import Any, Literal

from areal_runtime import workflow_context
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.errors import AgentRunError
from areal_runtime.experimental.openai.cache import ExportStyle
from areal_runtime.experimental.openai.proxy.agent_proxy import AgentProxy
from areal_runtime.utils.process_pool import (
    Job,
    WorkerCrashedError,
    WorkerTimedOutError,
    shared_pool,
)

AgentMode = Literal["inline", "subproc"]


def proxy_workflow(
    agent: Any,
    engine: Any,
    tokenizer: Any,
    *,
    mode: AgentMode = "inline",
    export_style: ExportStyle = "individual",
    turn_discount: float = 1.0,
    chat_template_type: Any = "hf",
    engine_max_tokens: int | None = None,
    subproc_max_workers: int = 4,
) -> AgentProxyWorkflow:
    """``agent`` as a workflow over its own proxy on ``engine`` (a loopback socket for subproc).

    The one place where the executor and the test runner build an agent's proxy; enter
    ``workflow.proxy`` (an async context manager) around the episodes. The keywords after
    ``mode`` are AReaL's ``rollout.agent`` settings.
    """
    tokenizer = tokenizer or getattr(engine, "tokenizer", None)
    if tokenizer is None:
        raise ValueError(
            "an agent workflow needs a tokenizer for the proxy's chat template: pass "
            "tokenizer=... or use an engine that has one"
        )
    transport = "socket" if mode == "subproc" else "inline"
    proxy = AgentProxy(
        engine,
        tokenizer,
        transport=transport,
        chat_template_type=chat_template_type,
        engine_max_tokens=engine_max_tokens,
    )
    return AgentProxyWorkflow(
        agent,
        proxy,
        mode=mode,
        export_style=export_style,
        turn_discount=turn_discount,
        subproc_max_workers=subproc_max_workers,
    )


def run_agent_in_worker(
    agent: Any, data: dict[str, Any], extra_kwargs: dict[str, Any], env: dict[str, str]
) -> Any:
    """What a subprocess worker runs: the agent on an event loop of its own."""
    os.environ.update(env)
    return asyncio.run(agent.run(data, **extra_kwargs))


def pickled_runner(agent: Any) -> bytes:
    """``agent`` bound into the worker's function, pickled once; a clear error if it cannot be."""
    if type(agent).__module__ == "__main__":
        raise TypeError(
            f"{type(agent).__name__} is defined in the __main__ script, which worker "
            "processes cannot import; move it to a module, or use mode='inline'"
        )
    try:
        return pickle.dumps(functools.partial(run_agent_in_worker, agent))
    except Exception as exc:
        raise TypeError(
            f"{type(agent).__name__} cannot be pickled for a worker process "
            f"({type(exc).__name__}: {exc}); keep only plain data on the agent, or use "
            "mode='inline'"
        ) from exc


async def run_in_worker(
    runner: bytes,
    name: str,
    data: dict[str, Any],
    base_url: str,
    api_key: str,
    *,
    max_workers: int,
    timeout_s: float,
) -> Any:
    """``agent.run(data, ...)`` in a pooled worker process that reaches the proxy at ``base_url``.

    The ``OPENAI_*`` / ``ANTHROPIC_*`` variables are set as AReaL sets them; a crash or a run
    past ``timeout_s`` is an ``AgentRunError`` (the worker is replaced).
    """
    env = {
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": api_key,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
    }
    kwargs = {"base_url": base_url, "api_key": api_key, "http_client": None}
    try:
        payload = pickle.dumps(((data, kwargs, env), {}))
    except Exception as exc:
        raise AgentRunError(f"the episode's data cannot be pickled for the worker: {exc}") from exc
    job = Job(fn_bytes=runner, payload=payload, timeout_s=timeout_s)
    try:
        ok, value = await shared_pool(max_workers, "agent").run(job)
    except WorkerTimedOutError:
        raise AgentRunError(
            f"{name}.run did not finish within {timeout_s}s in its worker "
            "process; the worker was killed and replaced"
        ) from None
    except WorkerCrashedError as exc:
        raise AgentRunError(
            f"the worker process running {name}.run died ({exc}); it was replaced"
        ) from None
    if not ok:
        raise AgentRunError(f"{name}.run raised in its worker process: {value}")
    return value


class AgentProxyWorkflow(RolloutWorkflow):
    """Each episode: a session, ``agent.run(data, **extra_kwargs)``, rewards, export.

    The proxy's own engine serves the agent; the ``engine`` argument of ``arun_episode`` is
    ignored, as in AReaL. An episode whose agent never called the model returns ``None``
    (rejected, as in AReaL) and notes why, with the base_url the agent was given: the report
    says so instead of a bare "returned None".
    """

    def __init__(
        self,
        agent: Any,
        proxy: AgentProxy,
        *,
        turn_discount: float = 1.0,
        export_style: ExportStyle = "individual",
        mode: AgentMode = "inline",
        subproc_max_workers: int = 4,
        subproc_timeout_s: float = 600.0,
    ) -> None:
        if not inspect.iscoroutinefunction(getattr(agent, "run", None)):
            raise TypeError(
                f"{type(agent).__name__} is not an agent: it needs "
                "`async def run(self, data, **extra_kwargs)`"
            )
        if not 0 < turn_discount <= 1:
            raise ValueError(f"turn_discount must be in (0, 1], got {turn_discount}")
        if mode not in ("inline", "subproc"):
            raise ValueError(f"mode must be 'inline' or 'subproc', got {mode!r}")
        self.agent = agent
        self.proxy = proxy
        self.turn_discount = turn_discount
        self.export_style = export_style
        self.mode = mode
        self.subproc_max_workers = subproc_max_workers
        self.subproc_timeout_s = subproc_timeout_s
        self._runner_bytes = self._pickled_runner() if mode == "subproc" else b""

    def _pickled_runner(self) -> bytes:
        if self.proxy.transport != "socket":
            raise ValueError(
                "mode='subproc' needs a socket proxy: AgentProxy(..., transport='socket')"
            )
        return pickled_runner(self.agent)

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any] | None:
        from areal_runtime.utils.data import concat_padded_tensors

        async with self.proxy.session(workflow_context.get().task_id) as session:
            if self.mode == "inline":
                result = await self.agent.run(data, **session.extra_kwargs)
            else:
                result = await self._run_in_worker(data, session.extra_kwargs)
            if not session.completion_ids:  # rejected, with the reason in the episode's notes
                workflow_context.note(_never_called(self.agent, result, session.extra_kwargs))
                return None
            for warning in session.warnings:
                workflow_context.note(warning)
            session.set_rewards(result)
            exported = session.export(self.turn_discount, self.export_style)
        return concat_padded_tensors([item.to_tensor_dict() for item in exported.values()])

    async def _run_in_worker(self, data: dict[str, Any], extra_kwargs: dict[str, Any]) -> Any:
        return await run_in_worker(
            self._runner_bytes,
            type(self.agent).__name__,
            data,
            extra_kwargs["base_url"],
            extra_kwargs["api_key"],
            max_workers=self.subproc_max_workers,
            timeout_s=self.subproc_timeout_s,
        )


def _never_called(agent: Any, result: Any, extra_kwargs: dict[str, Any]) -> str:
    """Why an episode without a completion is rejected, and where the agent should have gone."""
    return (
        f"{type(agent).__name__}.run returned {result!r} without calling the model: no request "
        f"reached the proxy at base_url={extra_kwargs['base_url']} with the episode's api_key. "
        "Point the agent's client (or its child process: OPENAI_BASE_URL / ANTHROPIC_BASE_URL) "
        "at the base_url and api_key in extra_kwargs"
    )
