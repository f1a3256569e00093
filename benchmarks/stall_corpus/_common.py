# SPDX-License-Identifier: Apache-2.0
"""What every corpus case shares: the model call through the proxy, and the slow local server.

A case is an agent (``run(data, **extra_kwargs)``, the shape hand-written agents take) whose
module says what it should get: ``EXPECTED = "stall"`` (the workflow's own stall, reported at
the line marked ``# blocks``) or ``"clean"`` (nothing of the workflow's counts).
"""

from __future__ import annotations

import os

from openai import AsyncOpenAI


async def ask_model(extra_kwargs: dict, data: dict) -> float:
    """One chat completion through the proxy with the client the runtime passes."""
    client = AsyncOpenAI(
        base_url=extra_kwargs["base_url"],
        api_key=extra_kwargs["api_key"],
        http_client=extra_kwargs["http_client"],
    )
    reply = await client.chat.completions.create(
        model="default", messages=data["messages"], max_tokens=8
    )
    return float(bool(reply.choices[0].message.content))


def slow_server_url() -> str:
    """A local HTTP server (started by the bench) that answers after 150 ms."""
    return os.environ["STALL_CORPUS_SERVER"]
