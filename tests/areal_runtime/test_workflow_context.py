# SPDX-License-Identifier: Apache-2.0
import asyncio
import gc
import warnings

import pytest

from areal_runtime import workflow_context
from areal_runtime.infra import workflow_context as infra_context
from areal_runtime.workflow_context import WorkflowContext


def test_infra_path_is_the_same_module_api():
    assert infra_context.get_httpx_client is workflow_context.get_httpx_client


@pytest.mark.asyncio
async def test_context_is_per_task_and_inherited_by_children():
    async def episode(task_id: int) -> list:
        workflow_context.set(WorkflowContext(is_eval=task_id % 2 == 1, task_id=task_id))
        await asyncio.sleep(0)

        async def child():
            return workflow_context.get().task_id, workflow_context.stat_scope()

        return await asyncio.gather(child(), child())

    results = await asyncio.gather(*(episode(i) for i in range(4)))
    assert results[0] == [(0, "rollout")] * 2
    assert results[3] == [(3, "eval-rollout")] * 2
    assert workflow_context.get() == WorkflowContext()


def test_set_rejects_other_types():
    with pytest.raises(TypeError, match="WorkflowContext"):
        workflow_context.set({"is_eval": True})


@pytest.mark.asyncio
async def test_clients_are_shared_per_loop_and_recreated_after_close():
    client = await workflow_context.get_httpx_client()
    assert client is await workflow_context.get_httpx_client()
    assert client._transport._pool._max_connections >= 512
    await client.aclose()  # noqa: ARL306 - closing the shared client is what this tests
    assert (await workflow_context.get_httpx_client()) is not client
    session = await workflow_context.get_aiohttp_session()
    assert session is await workflow_context.get_aiohttp_session()
    await session.close()  # noqa: ARL306 - closing the shared client is what this tests
    assert (await workflow_context.get_aiohttp_session()) is not session


def test_each_loop_gets_its_own_clients_closed_with_the_loop():
    async def grab():
        return (
            await workflow_context.get_httpx_client(),
            await workflow_context.get_aiohttp_session(),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        first = asyncio.run(grab())
        second = asyncio.run(grab())
        gc.collect()
    assert first[0] is not second[0] and first[1] is not second[1]
    assert first[0].is_closed and first[1].closed and second[0].is_closed and second[1].closed


@pytest.mark.asyncio
async def test_close_shared_clients_now():
    client = await workflow_context.get_httpx_client()
    await workflow_context.close_shared_clients()
    assert client.is_closed
