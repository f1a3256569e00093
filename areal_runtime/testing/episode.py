# SPDX-License-Identifier: Apache-2.0
"""Run one episode of a workflow the way the executor does, for tests.

Used by the ``run_episode`` fixture: the episode runs under ``WorkflowContext(is_eval, task_id)``
with the loop-stall detector on, agents go through the OpenAI-compatible proxy, and interaction
dicts come back as tensors. A stall fails the test (or warns) so a blocking call in a workflow
is caught by its unit test, not on the cluster.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Literal

from areal_runtime import workflow_context
from areal_runtime.errors import EpisodeRejected
from areal_runtime.infra.stall_detector import LoopStallDetector, StallReport
from areal_runtime.infra.workflow_executor import trajectory_of
from areal_runtime.infra.workflow_resolution import is_agent, resolve_workflow
from areal_runtime.workflow_context import WorkflowContext

StallMode = Literal["fail", "warn", "off"]


class LoopStallError(AssertionError):
    """The event loop was blocked during an episode."""

    def __init__(self, stalls: list[StallReport]) -> None:
        self.stalls = stalls
        super().__init__(
            "the event loop stalled during the episode:\n"
            + "\n".join(s.format() for s in stalls)
            + "\n(mark the test @pytest.mark.areal_allow_stall to accept this)"
        )


class EpisodeRunner:
    """Callable as ``await runner(workflow, data, engine=...)``; returns the trajectory or None."""

    def __init__(self, *, stall_mode: StallMode = "fail", stall_threshold_s: float = 0.1) -> None:
        self.stall_mode = stall_mode
        self.stall_threshold_s = stall_threshold_s
        self.stalls: list[StallReport] = []

    async def __call__(
        self,
        workflow: Any,
        data: dict[str, Any],
        engine: Any = None,
        *,
        is_eval: bool = False,
        task_id: int = 0,
        tokenizer: Any = None,
    ) -> dict[str, Any] | None:
        if engine is None:
            raise ValueError("run_episode needs an engine: run_episode(workflow, data, engine=...)")
        proxy = None
        if is_agent(workflow):
            from areal_runtime.experimental.openai.proxy import proxy_workflow

            workflow = proxy_workflow(workflow, engine, tokenizer)
            proxy = workflow.proxy
        runnable = resolve_workflow(workflow)
        token = workflow_context.set(WorkflowContext(is_eval=is_eval, task_id=task_id))
        detector = LoopStallDetector(
            self.stall_threshold_s, describe_task=lambda _task: f"episode {task_id}"
        )
        try:
            async with contextlib.nullcontext() if proxy is None else proxy:
                with detector if self.stall_mode != "off" else _nothing():
                    result = await runnable.arun_episode(engine, data)
        finally:
            workflow_context.reset(token)
        self.stalls.extend(detector.stalls)
        report_stalls(detector.stalls, self.stall_mode)
        try:
            return trajectory_of(result)
        except EpisodeRejected as rejected:
            if rejected.reason == "empty":
                return None
            raise


def report_stalls(stalls: list[StallReport], mode: StallMode) -> None:
    """Raise ``LoopStallError`` (mode ``fail``) or warn (``warn``) when there were stalls.

    Stalls caused by a first-time import or a first-use pydantic schema build are ignored
    (they happen once per process, see ``StallReport.one_time``), and so are the runtime's
    own (``StallReport.owner``): neither is the workflow's to fix.
    """
    stalls = [s for s in stalls if s.is_workflows]
    if not stalls or mode == "off":
        return
    if mode == "fail":
        raise LoopStallError(stalls)
    warnings.warn(str(LoopStallError(stalls)), stacklevel=3)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
