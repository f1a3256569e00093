import time

from _common import ask_model

EXPECTED = "stall"


def reward(answer: float) -> float:
    start = time.thread_time()
    total = 0
    while time.thread_time() - start < 0.2:  # blocks
        total += 1
    return answer


class Agent:
    async def run(self, data, **extra_kwargs):
        return reward(await ask_model(extra_kwargs, data))
