# SPDX-License-Identifier: Apache-2.0
"""Agents for the subprocess-mode tests: module level, so worker processes can import them.

They block on purpose (that is what subprocess mode is for), hence the ``noqa`` comments.
"""

import os
import time

from openai import OpenAI


class BlockingAgent:
    """A synchronous SDK client and time.sleep: fine in a worker, fatal on the event loop."""

    async def run(self, data, **extra_kwargs):
        time.sleep(0.2)  # noqa: ARL110
        url, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
        client = OpenAI(base_url=url, api_key=key, max_retries=0)  # noqa: ARL121
        reply = client.chat.completions.create(model="m", messages=data["messages"])  # noqa: ARL121
        return float(reply.choices[0].message.content == data["answer"])


class CrashingAgent:
    async def run(self, data, **extra_kwargs):
        if data.get("crash"):
            os._exit(7)
        return await BlockingAgent().run(data)


class HangingAgent:
    async def run(self, data, **extra_kwargs):
        if data.get("hang"):
            time.sleep(60)  # noqa: ARL110
        return await BlockingAgent().run(data)
