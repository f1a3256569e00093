import asyncio
import time

from _common import ask_model, slow_server_url

from areal_runtime import workflow_context

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        client = await workflow_context.get_httpx_client()
        await asyncio.gather(client.get(slow_server_url(), timeout=10), asyncio.sleep(0.05))
        await asyncio.to_thread(time.sleep, 0.1)
        time.sleep(0.01)  # 10 ms: under the threshold
        return await ask_model(extra_kwargs, data)
