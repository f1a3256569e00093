# SPDX-License-Identifier: Apache-2.0
"""Hooks passed to the workflows as import strings."""


def prompt_of(data):
    return [{"role": "user", "content": data["question"]}]
