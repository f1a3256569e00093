# SPDX-License-Identifier: Apache-2.0
"""Module-level reward functions: AReaL's wrapper runs them in a process pool (picklable)."""

import time


def add_lengths(prompt, completions, prompt_ids, completion_ids, **data):
    return float(len(prompt_ids) + len(completion_ids) + data.get("bonus", 0))


def sleepy(*args, **kwargs):
    time.sleep(5)
    return 1.0


def broken(*args, **kwargs):
    raise KeyError("no answer")
