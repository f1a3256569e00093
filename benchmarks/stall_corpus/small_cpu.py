import time

from _common import ask_model

EXPECTED = "clean"


def score(text: str) -> int:
    start, total = time.thread_time(), 0
    while time.thread_time() - start < 0.015:  # 15 ms of computing, like a tokenizer call
        total += len(text)
    return total


class Agent:
    async def run(self, data, **extra_kwargs):
        score(str(data["messages"]))
        return await ask_model(extra_kwargs, data)
