# SPDX-License-Identifier: Apache-2.0
"""The loop serves an agent's proxy around every episode and closes it however training ends."""

import asyncio

import pytest

from areal_runtime.api import RolloutWorkflow
from areal_runtime.api.cli_args import GRPOConfig
from areal_runtime.trainer.loop import AsyncRLLoop, TrainingInputError


class Proxy:
    def __init__(self) -> None:
        self.entered = self.exited = 0
        self.in_flight_at_exit = -1

    async def __aenter__(self) -> "Proxy":
        self.entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.exited += 1
        self.in_flight_at_exit = Failing.in_flight


class Failing(RolloutWorkflow):
    """Every episode fails, after checking that the proxy is being served."""

    in_flight = 0
    proxy: Proxy

    async def arun_episode(self, engine, data):
        Failing.in_flight += 1
        try:
            assert (self.proxy.entered, self.proxy.exited) == (1, 0), "proxy not served"
            await asyncio.sleep(0.01 * (data["n"] % 3))
            raise RuntimeError("bad row")
        finally:
            Failing.in_flight -= 1


class Engine:
    def get_version(self) -> int:
        return 0

    def update_weights(self, state):  # never reached: nothing is accepted
        raise AssertionError("no update expected")


def test_the_proxy_is_exited_after_the_episodes_when_training_fails():
    config = GRPOConfig()
    config.rollout.consumer_batch_size = 2
    config.rollout.max_head_offpolicyness = 1
    workflow = Failing()
    loop = AsyncRLLoop(
        config=config,
        engine=Engine(),
        learner=None,
        workflow=workflow,
        dataset=[{"n": n} for n in range(8)],
    )
    proxy = workflow.proxy = loop.executor.proxy = Proxy()
    with pytest.raises(TrainingInputError, match="every episode so far was rejected"):
        asyncio.run(loop.run(3))
    assert (proxy.entered, proxy.exited) == (1, 1)
    assert proxy.in_flight_at_exit == 0  # the episodes in flight were cancelled first
    assert loop.rejected_why == {"exception: RuntimeError: bad row": sum(loop.rejected.values())}


@pytest.mark.asyncio
async def test_run_episode_is_the_executors_public_single_episode():
    from areal_runtime.infra.workflow_executor import WorkflowExecutor

    class Raising(RolloutWorkflow):
        async def arun_episode(self, engine, data):
            raise ValueError(f"row {data['n']}")

    record = await WorkflowExecutor(Raising(), None).run_episode(7, {"n": 5})
    assert (record.index, record.accepted, record.reason) == (7, False, "exception")
    assert record.error.strip().endswith("ValueError: row 5")
