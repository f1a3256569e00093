# SPDX-License-Identifier: Apache-2.0
"""A two-turn agent for the rollout.agent tests (importable by subproc workers)."""

import os
import uuid

from areal_runtime.models.default_model import arithmetic_reward


class TwoTurnAgent:
    """Asks the question, then "Again?"; the user turns name the process the agent runs in."""

    async def run(self, data, **kw):
        from openai import AsyncOpenAI

        from areal_runtime.workflow._agent_client import client_settings

        settings = client_settings(kw)  # inline: the proxy's client; subproc: the socket
        client = AsyncOpenAI(
            base_url=settings.base_url, api_key=settings.api_key, http_client=settings.http_client
        )
        messages = [dict(m) for m in data["messages"]]
        # A nonce per episode: group members that sample the same first reply stay tellable
        # apart for the trainer's first-batch check (it matches rows to calls by prefix).
        messages[-1]["content"] += f" [pid {os.getpid()}] {uuid.uuid4().int % 10**6}"
        reply = ""
        for turn in range(2):
            r = await client.chat.completions.create(
                model="default", messages=messages, max_completion_tokens=5, temperature=1.0
            )
            reply = r.choices[0].message.content or ""
            messages.append({"role": "assistant", "content": reply})
            if turn == 0:
                messages.append({"role": "user", "content": "Again?"})
        if "fixed_reward" in data:
            return float(data["fixed_reward"])
        return arithmetic_reward(completions=reply, answer=data["answer"])
