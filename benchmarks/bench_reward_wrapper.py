# SPDX-License-Identifier: Apache-2.0
"""AsyncRewardWrapper vs a re-implementation of AReaL's timeout-and-retry wrapper.

Measures calls/s for a trivial reward (64 concurrent calls) and the latency of one trivial call
made right after two calls that hang, both with one worker. Run:
``python benchmarks/bench_reward_wrapper.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from _util import table

from areal_runtime.api.reward_api import AsyncRewardWrapper, RewardTimeoutError
from areal_runtime.testing.rewards import exact_match_reward, sleep_then_reward

TIMEOUT_S = 1.0
HANG_S = 5.0


class AReaLStyleWrapper:
    """AReaL's behaviour as the spec describes it: a shared ProcessPoolExecutor, asyncio.wait_for
    around run_in_executor, retries on timeout, and 0 after the last attempt. A timed-out job
    keeps its worker busy (it cannot be cancelled)."""

    def __init__(self, fn, timeout_seconds=TIMEOUT_S, max_workers=1, max_retries=0) -> None:
        self.fn, self.timeout, self.retries = fn, timeout_seconds, max_retries
        self.pool = ProcessPoolExecutor(max_workers)

    async def __call__(self, *args, **kwargs) -> float:
        loop = asyncio.get_running_loop()
        for _ in range(self.retries + 1):
            try:
                job = loop.run_in_executor(self.pool, partial(self.fn, *args, **kwargs))
                return await asyncio.wait_for(job, self.timeout)
            except TimeoutError:
                continue
        return 0


async def calls_per_s(wrapper, n: int = 256) -> float:
    await wrapper("p", "4", [], [], answer="4")
    start = time.perf_counter()
    await asyncio.gather(*(wrapper("p", "4", [], [], answer="4") for _ in range(n)))
    return n / (time.perf_counter() - start)


async def latency_after_hangs(make_hung, make_quick) -> float:
    hung, quick = make_hung(), make_quick()
    await quick("p", "4", [], [], answer="4")
    for _ in range(2):
        with contextlib.suppress(RewardTimeoutError):
            await hung(HANG_S)
    start = time.perf_counter()
    await quick("p", "4", [], [], answer="4")
    return time.perf_counter() - start


async def main() -> None:
    rows = []
    ours_rate = statistics.median(
        [await calls_per_s(AsyncRewardWrapper(exact_match_reward, max_workers=1)) for _ in range(3)]
    )
    areal_rate = statistics.median(
        [await calls_per_s(AReaLStyleWrapper(exact_match_reward)) for _ in range(3)]
    )
    ours_lat = await latency_after_hangs(
        lambda: AsyncRewardWrapper(sleep_then_reward, timeout_seconds=TIMEOUT_S, max_workers=1),
        lambda: AsyncRewardWrapper(exact_match_reward, timeout_seconds=30, max_workers=1),
    )
    shared = AReaLStyleWrapper(sleep_then_reward)
    quick = AReaLStyleWrapper(exact_match_reward, timeout_seconds=30)
    quick.pool = shared.pool  # AReaL keys pools by max_workers: both wrappers share one
    areal_lat = await latency_after_hangs(lambda: shared, lambda: quick)
    rows.append(
        [
            "trivial reward, calls/s (256 concurrent, 1 worker)",
            f"{ours_rate:.0f}",
            f"{areal_rate:.0f}",
        ]
    )
    rows.append(
        [
            f"trivial call after two hung calls (timeout {TIMEOUT_S}s, hang {HANG_S}s)",
            f"{ours_lat * 1000:.0f} ms",
            f"{areal_lat * 1000:.0f} ms",
        ]
    )
    print(table(["measure", "areal_runtime", "AReaL-style"], rows))
    shared.pool.shutdown(wait=False, cancel_futures=True)


if __name__ == "__main__":
    asyncio.run(main())
