# SPDX-License-Identifier: Apache-2.0
"""AReaL's subproc mode: agents in worker processes, over a loopback proxy."""

import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.errors import AgentRunError
from areal_runtime.experimental.openai.proxy import AgentProxy, AgentProxyWorkflow
from areal_runtime.infra.workflow_executor import run_rollout
from areal_runtime.models.tokenizers import tiny_tokenizer

from .subproc_agents import BlockingAgent, CrashingAgent, HangingAgent

QUESTION = {"messages": [{"role": "user", "content": "What is 2+3?"}], "answer": "5"}


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_blocking_agent_runs_in_workers_without_stalling_the_loop():
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True, logprob=-0.5)
    result = await run_rollout(
        BlockingAgent(), [QUESTION] * 4, engine, agent_mode="subproc", stall_threshold_s=0.1
    )
    assert result.report.accepted == 4
    assert [s for s in result.report.stalls if not s.one_time] == []  # first imports aside
    assert result.batch["rewards"].tolist() == [1.0] * 4
    n_prompt = len(engine.requests[0].input_ids)
    assert result.batch["loss_mask"][:, n_prompt:].sum().item() == 4 * 2  # "5" and the eos


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_crashed_or_hung_worker_fails_only_its_episode_and_is_replaced():
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    crash = await run_rollout(
        CrashingAgent(), [{**QUESTION, "crash": True}, QUESTION], engine,
        agent_mode="subproc", concurrency=1,
    )  # fmt: skip
    first, second = crash.episodes
    assert not first.accepted and "died (exit code 7); it was replaced" in first.error
    assert second.accepted and second.reward == 1.0
    async with AgentProxy(engine, tok, transport="socket") as proxy:
        workflow = AgentProxyWorkflow(HangingAgent(), proxy, mode="subproc", subproc_timeout_s=1.0)
        with pytest.raises(AgentRunError, match=r"did not finish within 1\.0s"):
            await workflow.arun_episode(None, {**QUESTION, "hang": True})
        traj = await workflow.arun_episode(None, QUESTION)
        assert traj["rewards"].tolist() == [1.0]


def test_subproc_mode_refuses_what_a_worker_cannot_run():
    tok = tiny_tokenizer()
    inline = AgentProxy(None, tok)
    with pytest.raises(ValueError, match="needs a socket proxy"):
        AgentProxyWorkflow(BlockingAgent(), inline, mode="subproc")

    class Local:  # defined in a function: a worker cannot import it
        async def run(self, data, **kw):
            return 0.0

    with pytest.raises(TypeError, match="cannot be pickled"):
        AgentProxyWorkflow(Local(), AgentProxy(None, tok, transport="socket"), mode="subproc")
