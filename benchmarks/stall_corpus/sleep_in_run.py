import time

from _common import ask_model

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        time.sleep(0.2)  # blocks
        return await ask_model(extra_kwargs, data)
