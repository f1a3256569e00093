import time

from _common import ask_model

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        for _ in range(3):
            time.sleep(0.008)  # 24 ms in all: under the 50 ms threshold
        return await ask_model(extra_kwargs, data)
