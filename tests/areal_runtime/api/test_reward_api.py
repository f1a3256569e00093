# SPDX-License-Identifier: Apache-2.0
"""AsyncRewardWrapper: modes, error handling, and worker hangs, crashes and kills."""

import asyncio
import functools
import os
import signal

import pytest

from areal_runtime.api import reward_api
from areal_runtime.api.reward_api import (
    AsyncRewardWrapper,
    RewardFunctionError,
    RewardTimeoutError,
    default_max_workers,
    use_reward_mode,
)
from areal_runtime.testing import rewards

ARGS = ("prompt", " 4 ", [1], [2])


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["process", "thread", "inline"])
async def test_every_mode_returns_a_float(mode):
    w = AsyncRewardWrapper(rewards.exact_match_reward, timeout_seconds=30, mode=mode)
    right = await w(*ARGS, answer="4")
    wrong = await w(*ARGS, answer="5")
    assert (right, wrong) == (1.0, 0.0) and type(right) is float
    assert w.stats.calls == 2 and w.stats.successes == 2 and w.stats.errors == 0


@pytest.mark.asyncio
async def test_process_mode_runs_in_another_process():
    w = AsyncRewardWrapper(rewards.pid_reward, timeout_seconds=30, max_workers=1)
    assert int(await w()) != os.getpid()


def test_lambda_and_closure_are_refused_at_construction():
    with pytest.raises(TypeError, match=r"cannot be pickled.*module level.*mode='thread'"):
        AsyncRewardWrapper(lambda *a: 1.0)  # noqa: ARL403 - the runtime must refuse it

    def closure(*a):
        return 1.0

    with pytest.raises(TypeError, match="cannot be pickled"):
        AsyncRewardWrapper(closure)  # noqa: ARL403 - the runtime must refuse it
    assert AsyncRewardWrapper(closure, mode="thread").mode == "thread"


def test_partial_of_a_module_function_is_accepted():
    w = AsyncRewardWrapper(functools.partial(rewards.sleep_then_reward, 0.0))
    assert "sleep_then_reward" in w.name


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="async def"):

        async def coro_reward():
            return 1.0

        AsyncRewardWrapper(coro_reward)  # noqa: ARL404 - the runtime must refuse it
    with pytest.raises(ValueError, match="timeout_seconds"):
        AsyncRewardWrapper(rewards.pid_reward, timeout_seconds=0)
    with pytest.raises(ValueError, match="unknown reward mode"):
        AsyncRewardWrapper(rewards.pid_reward, mode="gpu")


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["process", "inline"])
async def test_deterministic_exception_is_raised_once_naming_the_function(mode):
    w = AsyncRewardWrapper(rewards.raising_reward, timeout_seconds=30, max_workers=1, mode=mode)
    with pytest.raises(RewardFunctionError, match=r"raising_reward raised ValueError"):
        await w()
    assert w.stats.errors == 1 and w.stats.retries == 0 and w.stats.calls == 1


@pytest.mark.asyncio
async def test_fallback_is_opt_in_and_counted():
    w = AsyncRewardWrapper(rewards.raising_reward, mode="inline", fallback=-1)
    assert await w() == -1.0
    assert w.stats.fallbacks == 1 and w.stats.errors == 1


@pytest.mark.asyncio
async def test_non_numeric_result_is_an_error():
    w = AsyncRewardWrapper(str, mode="inline")
    with pytest.raises(RewardFunctionError, match="must return a number"):
        await w("x")


@pytest.mark.asyncio
async def test_hung_reward_times_out_and_its_worker_is_replaced():
    hung = AsyncRewardWrapper(rewards.sleep_then_reward, timeout_seconds=0.5, max_workers=1)
    quick = AsyncRewardWrapper(rewards.exact_match_reward, timeout_seconds=30, max_workers=1)
    await quick(*ARGS, answer="4")  # start the worker
    for _ in range(2):
        with pytest.raises(RewardTimeoutError, match="worker was killed and replaced"):
            await hung(3600)
    # AReaL's pool would still be stuck for an hour; the bound is a deadlock guard, far above
    # what a busy machine adds to a sub-second call, so load cannot fail it.
    assert await asyncio.wait_for(quick(*ARGS, answer="4"), 120) == 1.0
    assert hung.stats.timeouts == 2 and hung.stats.worker_restarts == 2
    assert reward_api.GLOBAL_STATS.timeouts >= 2


@pytest.mark.asyncio
async def test_timeout_with_fallback_returns_a_float_zero():
    w = AsyncRewardWrapper(
        rewards.sleep_then_reward, timeout_seconds=0.3, max_workers=1, fallback=0
    )
    value = await w(3600)
    assert value == 0.0 and type(value) is float
    assert w.stats.timeouts == 1 and w.stats.fallbacks == 1


@pytest.mark.asyncio
async def test_timeout_clock_starts_when_the_call_runs_not_when_queued():
    w = AsyncRewardWrapper(rewards.sleep_then_reward, timeout_seconds=1.0, max_workers=1)
    await w(0.0)
    # Three 0.6 s calls on one worker: the last waits 1.2 s in the queue, yet must not time out.
    results = await asyncio.gather(w(0.6), w(0.6), w(0.6))
    assert results == [1.0, 1.0, 1.0] and w.stats.timeouts == 0


@pytest.mark.asyncio
async def test_worker_that_calls_os_exit_is_replaced_and_retried_then_reported():
    w = AsyncRewardWrapper(rewards.exiting_reward, timeout_seconds=30, max_workers=1, max_retries=2)
    with pytest.raises(RewardFunctionError, match=r"died 3 time\(s\).*exit code 3"):
        await w()
    assert w.stats.retries == 2 and w.stats.worker_restarts == 3
    ok = AsyncRewardWrapper(rewards.exact_match_reward, timeout_seconds=30, max_workers=1)
    assert await ok(*ARGS, answer="4") == 1.0


@pytest.mark.asyncio
async def test_worker_killed_by_sigkill_is_replaced_and_the_call_retried():
    pid_of = AsyncRewardWrapper(rewards.pid_reward, timeout_seconds=30, max_workers=1)
    slow = AsyncRewardWrapper(rewards.sleep_then_reward, timeout_seconds=30, max_workers=1)
    worker_pid = int(await pid_of())
    call = asyncio.ensure_future(slow(1.0, 0.75))
    await asyncio.sleep(0.3)
    os.kill(worker_pid, signal.SIGKILL)
    assert await call == 0.75
    assert slow.stats.retries == 1 and slow.stats.worker_restarts == 1
    assert int(await pid_of()) != worker_pid


def test_use_reward_mode_sets_the_default_for_new_wrappers():
    with use_reward_mode("inline"):
        assert AsyncRewardWrapper(rewards.pid_reward).mode == "inline"
        assert AsyncRewardWrapper(rewards.pid_reward, mode="process").mode == "process"
    assert AsyncRewardWrapper(rewards.pid_reward).mode == "process"
    with pytest.raises(ValueError, match="unknown reward mode"), use_reward_mode("gpu"):
        pass


@pytest.mark.asyncio
async def test_wrappers_created_per_episode_share_one_pool():
    pids = set()
    for _ in range(5):
        w = AsyncRewardWrapper(rewards.pid_reward, timeout_seconds=30, max_workers=1)
        pids.add(int(await w()))
        del w
    assert len(pids) == 1


def test_default_max_workers_is_sane_on_cpu():
    assert 1 <= default_max_workers() <= 8
    assert default_max_workers() == min(8, os.cpu_count() or 1)


@pytest.mark.asyncio
async def test_thread_mode_timeout_is_reported():
    w = AsyncRewardWrapper(rewards.sleep_then_reward, timeout_seconds=0.2, mode="thread")
    with pytest.raises(RewardTimeoutError, match="thread mode cannot stop it"):
        await w(0.6)
    assert w.stats.timeouts == 1


def test_main_script_functions_are_refused_for_process_mode():
    def fake():
        return 1.0

    fake.__module__ = "__main__"
    fake.__qualname__ = "fake"
    import __main__

    __main__.fake = fake
    try:
        with pytest.raises(TypeError, match="__main__ script"):
            AsyncRewardWrapper(fake)  # noqa: ARL403 - the runtime must refuse it
    finally:
        del __main__.fake


def test_a_job_whose_event_loop_closed_does_not_kill_its_pool_slot():
    """The caller's loop may close while a reward runs (asyncio.run ends, a test finishes):
    the answer is dropped and the slot keeps serving later calls."""
    import asyncio as aio

    from areal_runtime.testing.rewards import sleep_then_reward

    wrapper = AsyncRewardWrapper(sleep_then_reward, max_workers=1, timeout_seconds=30)

    async def abandon() -> None:
        task = aio.ensure_future(wrapper(0.5, 1.0))
        await aio.sleep(0.2)  # the job is running in the worker when this loop ends
        task.cancel()

    aio.run(abandon())
    # a dead slot would leave these waiting forever: bound them so the test fails instead
    assert aio.run(aio.wait_for(wrapper(0.0, 2.0), 20)) == 2.0
    assert aio.run(aio.wait_for(wrapper(0.0, 3.0), 20)) == 3.0


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["process", "thread", "inline"])
async def test_a_pickled_wrapper_keeps_its_settings_and_still_scores(mode):
    """Agents that hold a wrapper go to worker processes (agent_mode="subproc") by pickle."""
    import pickle

    wrapper = AsyncRewardWrapper(
        rewards.exact_match_reward, timeout_seconds=7, mode=mode, fallback=0.0
    )
    copy = pickle.loads(pickle.dumps(wrapper))
    assert (copy.name, copy.mode, copy.timeout_seconds, copy.fallback) == (
        wrapper.name,
        mode,
        7,
        0.0,
    )
    assert await copy(*ARGS, answer="4") == 1.0
    assert copy.stats.calls == 1 and wrapper.stats.calls == 0  # each copy counts its own
