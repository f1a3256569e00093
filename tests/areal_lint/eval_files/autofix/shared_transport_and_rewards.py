import asyncio

from openai import AsyncOpenAI

from areal import workflow_context
from areal.api import AsyncRewardWrapper


def math_reward_fn(completion, answer):
    return float(completion == answer)


class Judge:
    def __init__(self):
        self.async_reward_fn = AsyncRewardWrapper(math_reward_fn)

    async def arun_episode(self, engine, data):
        shared = await workflow_context.get_httpx_client()
        # the judge client
        async with AsyncOpenAI(http_client=shared) as judge:  # ARL306
            verdict = await judge.chat.completions.create(model="m", messages=[])
            if verdict:
                data["verdict"] = verdict
        async with AsyncOpenAI(http_client=shared) as j2, asyncio.timeout(5): await j2.close()  # ARL306
        async with AsyncOpenAI(http_client=shared) as j3: data["j3"] = j3  # ARL306
        # not fixable: a later item may use an earlier one's target
        async with asyncio.timeout(5), AsyncOpenAI(http_client=shared) as j4:  # ARL306
            data["j4"] = j4
        reward = math_reward_fn(data["c"], data["a"])  # ARL401
        self.async_reward_fn(data["c"], data["a"])  # ARL402
        return judge, reward
