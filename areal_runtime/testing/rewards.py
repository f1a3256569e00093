# SPDX-License-Identifier: Apache-2.0
"""Module-level reward functions for tests: importable in worker processes, so they pickle."""

from __future__ import annotations

import os
import time


def exact_match_reward(
    prompt: str, completions: str, prompt_ids, completion_ids, answer: str = "", **kw
) -> float:
    """1.0 when the completion, stripped, equals ``answer``; AReaL's positional contract."""
    return float(completions.strip() == str(answer).strip())


def sleep_then_reward(seconds: float, value: float = 1.0) -> float:
    time.sleep(seconds)
    return value


def raising_reward(*_args, **_kwargs) -> float:
    raise ValueError("this reward always fails")


def exiting_reward(*_args, **_kwargs) -> float:
    os._exit(3)


def pid_reward(*_args, **_kwargs) -> float:
    """Returns the worker's pid, so a test can find (and kill) the process running it."""
    return float(os.getpid())
