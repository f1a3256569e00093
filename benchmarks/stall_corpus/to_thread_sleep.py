import asyncio
import time

from _common import ask_model

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        await asyncio.to_thread(time.sleep, 0.2)
        return await ask_model(extra_kwargs, data)
