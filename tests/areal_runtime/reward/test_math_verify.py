# SPDX-License-Identifier: Apache-2.0
"""``areal_runtime.reward``: AReaL's math-verify worker and GSM8K reward."""

import threading

import pytest

from areal_runtime.api import AsyncRewardWrapper
from areal_runtime.reward import MathVerifyWorker, get_math_verify_worker
from areal_runtime.reward.gsm8k import gsm8k_reward_fn


@pytest.mark.parametrize(
    ("response", "answer", "expected"),
    [
        ("The answer is \\boxed{72}.", "72", 1.0),
        ("So she sold 48 + 24 = 72 clips. 72", "72", 1.0),
        ("\\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("The answer is 71.", "72", 0.0),
        ("I don't know", "72", 0.0),
        ("", "72", 0.0),
    ],
)
def test_gsm8k_reward(response, answer, expected):
    assert gsm8k_reward_fn("prompt", response, [1], [2], answer=answer) == expected


def test_the_default_worker_is_shared_and_errors_score_zero(monkeypatch):
    assert get_math_verify_worker() is get_math_verify_worker()
    worker = MathVerifyWorker()

    def broken(response, ground_truth):
        raise RuntimeError("parser crashed")

    monkeypatch.setattr(worker, "_verify", broken)
    assert worker.verify("72", "72") == 0.0


def test_the_timeout_really_bounds_the_call(monkeypatch):
    """The verdict comes back while the slow call is still running (AReaL's version waits it
    out): an event, not a stopwatch, so a busy machine cannot fail it."""
    worker = MathVerifyWorker(timeout=0.2)
    release, finished = threading.Event(), threading.Event()

    def slow(response, ground_truth):
        release.wait(60)
        finished.set()
        return 1.0

    monkeypatch.setattr(worker, "_verify", slow)
    try:
        assert worker.verify("72", "72") == 0.0
        assert not finished.is_set()  # returned before the call it bounds had ended
    finally:
        release.set()


@pytest.mark.asyncio
async def test_it_runs_in_the_reward_process_pool():
    wrapper = AsyncRewardWrapper(gsm8k_reward_fn)
    assert await wrapper("p", "\\boxed{72}", [1], [2], answer="72") == 1.0


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("The angle is [ 90 ].", "90", 1.0),
        ("first [30], then [45]", "45", 1.0),
        ("no brackets, so 1,000", "1000", 1.0),
        ("[60]", "90", 0.0),
        ("", "90", 0.0),
        ("No answer", None, 0.0),
    ],
)
def test_geometry3k_reward(completion, answer, reward):
    from areal_runtime.reward import geometry3k_reward_fn

    assert geometry3k_reward_fn("p", completion, [], [], answer) == reward


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [("I count [3]", "3", 1.0), ("[3] or [4]", " 4 ", 1.0), ("3", "3", 0.0), ("[3]", 3, 1.0)],
)
def test_clevr_count_reward(completion, answer, reward):
    from areal_runtime.reward import clevr_count_70k_reward_fn

    assert clevr_count_70k_reward_fn("p", completion, [], [], answer) == reward
