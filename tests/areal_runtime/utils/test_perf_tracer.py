"""The perf tracer: unconfigured it changes nothing; configured, a decorated workflow's sessions
and scopes are written where AReaL writes them."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest

from areal_runtime.utils import perf_tracer
from areal_runtime.utils.perf_tracer import (
    Category,
    atrace_scope,
    atrace_session_phase,
    session_context,
    trace_perf,
    trace_scope,
    trace_session,
    trace_session_phase,
)


class Workflow:
    @trace_session("reward")
    async def reward(self, value: int) -> int:
        return value * 2

    @session_context()
    @trace_perf("Workflow.arun_episode", category=Category.COMPUTE)
    async def arun_episode(self, value: int) -> int:
        async with (
            atrace_session_phase("generate"),
            atrace_scope("inner", category="io", args={"k": 1}),
        ):
            doubled = await self.reward(value)
        with trace_session_phase("post"), trace_scope("post"):
            return doubled + 1


@pytest.mark.asyncio
async def test_decorated_episode_runs_and_keeps_its_result() -> None:
    assert await Workflow().arun_episode(3) == 7


def test_decorators_keep_the_function_shape() -> None:
    assert inspect.iscoroutinefunction(Workflow.arun_episode)
    assert inspect.iscoroutinefunction(Workflow.reward)

    def plain() -> str:
        return "x"

    traced = trace_perf("plain")(plain)
    assert traced() == "x" and traced.__name__ == "plain" and traced.__wrapped__ is plain


@pytest.mark.asyncio
async def test_configured_tracer_writes_the_episode_sessions_and_scopes(tmp_path) -> None:
    from areal_runtime.api.cli_args import PerfTracerConfig, SessionTracerConfig

    config = PerfTracerConfig(
        experiment_name="e",
        trial_name="t",
        fileroot=str(tmp_path),
        enabled=True,
        session_tracer=SessionTracerConfig(enabled=True, flush_threshold=1),
    )
    perf_tracer.configure(config, rank=0)
    try:
        perf_tracer.register_task(7)
        perf_tracer.set_task_id(7)
        assert await Workflow().arun_episode(3) == 7
        perf_tracer.trace_session_event("mark_finalized", task_id=7, status="accepted")
        perf_tracer.save(force=True)
    finally:
        perf_tracer.reset()
    (sessions,) = tmp_path.glob("logs/*/e/t/session_tracer/sessions-r0.jsonl")
    (record,) = [json.loads(line) for line in sessions.read_text().splitlines()]
    assert record["task_id"] == 7 and record["status"] == "accepted"
    assert set(record["phases"]) == {"generate", "reward"} and record["reward_s"] >= 0
    (traces,) = tmp_path.glob("logs/*/e/t/perf_tracer/traces-r0.jsonl")
    events = [json.loads(line) for line in traces.read_text().splitlines()]
    spans = {e["name"] for e in events if e["ph"] == "X"}
    assert {"Workflow.arun_episode", "inner", "post"} <= spans


def test_exceptions_propagate_through_scopes() -> None:
    async def failing() -> None:
        async with atrace_session_phase("generate"):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(failing())
    with pytest.raises(KeyError), trace_scope("x"):
        raise KeyError("k")


def test_task_ids_are_per_task() -> None:
    async def set_and_read(task_id: int) -> int | None:
        perf_tracer.set_task_id(task_id)
        await asyncio.sleep(0)
        return perf_tracer.get_task_id()

    async def main() -> list[int | None]:
        return list(await asyncio.gather(*(set_and_read(i) for i in range(5))))

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]
    assert perf_tracer.get_task_id() is None
    assert perf_tracer.is_configured() is False
