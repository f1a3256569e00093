import asyncio

from _common import ask_model

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        process = await asyncio.create_subprocess_exec("sleep", "0.2")
        await process.wait()
        return await ask_model(extra_kwargs, data)
