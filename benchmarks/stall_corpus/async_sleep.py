import asyncio

from _common import ask_model

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        await asyncio.sleep(0.2)
        return await ask_model(extra_kwargs, data)
