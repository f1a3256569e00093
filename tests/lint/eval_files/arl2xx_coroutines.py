import asyncio

from areal.api import AsyncRewardWrapper


def math_reward(completion, answer):
    return float(completion == answer)


class Agent:
    def __init__(self):
        self.reward = AsyncRewardWrapper(math_reward)
        self.tasks = set()

    async def helper(self):
        return 1

    async def arun_episode(self, engine, data):
        self.helper()  # ARL201
        engine.agenerate(data)  # ARL201
        _ = self.helper()  # ARL201
        resp = engine.agenerate(data)
        tokens = resp.output_tokens  # ARL203
        pending = self.helper()  # ARL202
        if self.helper():  # ARL203
            pass
        value = float(engine.agenerate(data))  # ARL203
        asyncio.create_task(self.helper())  # ARL204
        _ = asyncio.create_task(self.helper())  # ARL204
        task = asyncio.create_task(self.helper())
        self.tasks.add(asyncio.create_task(self.helper()))
        coros = [self.helper() for _ in range(3)]
        await asyncio.gather(*coros)
        later = engine.agenerate(data)
        result = await later
        await asyncio.to_thread(self.helper)  # ARL205
        self.reward("a", "b")  # ARL402
        score = self.reward("a", "b")
        print(score)  # ARL402
        good = await self.reward("a", "b")
        return tokens, value, task, result, good

    async def discard(self, engine):
        _pending = engine.agenerate(None)
        _pending.close()
