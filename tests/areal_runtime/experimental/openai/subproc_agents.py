# SPDX-License-Identifier: Apache-2.0
"""Agents for the subprocess-mode tests: module level, so worker processes can import them."""

import os
import time

from openai import OpenAI


class BlockingAgent:
    """A synchronous SDK client and time.sleep: fine in a worker, fatal on the event loop."""

    async def run(self, data, **extra_kwargs):
        time.sleep(0.2)
        client = OpenAI(
            base_url=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ["OPENAI_API_KEY"],
            max_retries=0,
        )
        reply = client.chat.completions.create(model="m", messages=data["messages"])
        return float(reply.choices[0].message.content == data["answer"])


class CrashingAgent:
    async def run(self, data, **extra_kwargs):
        if data.get("crash"):
            os._exit(7)
        return await BlockingAgent().run(data)


class HangingAgent:
    async def run(self, data, **extra_kwargs):
        if data.get("hang"):
            time.sleep(60)
        return await BlockingAgent().run(data)
