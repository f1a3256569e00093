import asyncio

from areal.api import AsyncRewardWrapper  # ARG --select=ARL2,ARL402


def math_reward(completion, answer):
    return float(completion == answer)


class Agent:
    def __init__(self):
        self.reward = AsyncRewardWrapper(math_reward)
        self.tasks = set()

    async def helper(self):
        return 1

    async def arun_episode(self, engine, data):
        self.helper()  # ARL201: self.helper
        engine.agenerate(data)  # ARL201: engine.agenerate
        _ = self.helper()  # ARL201: self.helper
        resp = engine.agenerate(data)
        tokens = resp.output_tokens  # ARL203: resp
        pending = self.helper()  # ARL202: pending
        if self.helper():  # ARL203: self.helper()
            pass
        value = float(engine.agenerate(data))  # ARL203: engine.agenerate()
        asyncio.create_task(self.helper())  # ARL204: asyncio.create_task
        _ = asyncio.create_task(self.helper())  # ARL204: asyncio.create_task
        task = asyncio.create_task(self.helper())
        self.tasks.add(asyncio.create_task(self.helper()))
        coros = [self.helper() for _ in range(3)]
        await asyncio.gather(*coros)
        later = engine.agenerate(data)
        result = await later
        await asyncio.to_thread(self.helper)  # ARL205: self.helper
        self.reward("a", "b")  # ARL402: self.reward
        score = self.reward("a", "b")
        print(score)  # ARL402: self.reward
        good = await self.reward("a", "b")
        return tokens, value, task, result, good

    async def discard(self, engine):
        _pending = engine.agenerate(None)
        _pending.close()
