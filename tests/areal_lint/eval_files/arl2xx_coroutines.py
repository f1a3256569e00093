import asyncio

import torch

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


# ---- a coroutine followed to where it ends (issue 22): the generated template's shapes -------
class TemplateShapes:
    """`areal-devkit new NAME --variant V` with the `await` before the reward call deleted."""

    def __init__(self):
        self.async_reward_fn = AsyncRewardWrapper(math_reward)

    async def rlvr(self, engine, data):
        resp = await engine.agenerate(data)
        reward = self.async_reward_fn("p", "c", resp.input_tokens, resp.output_tokens)
        return {
            "input_ids": torch.tensor([resp.input_tokens + resp.output_tokens]),
            "rewards": torch.tensor([reward], dtype=torch.float32),  # ARL402: self.async_reward_fn
        }

    async def agent_openai(self, completion, answer, task_data):
        reward = self.async_reward_fn(completions=answer, **task_data)
        return {completion.id: reward}  # ARL402: self.async_reward_fn

    async def agent_openai_agents(self, result, task_data):
        return self.async_reward_fn(completions=str(result.final_output), **task_data)  # ARL402: self.async_reward_fn

    async def multi_turn(self, turn, max_turns):
        reward = self.async_reward_fn("p", "c")
        if reward > 0 or turn == max_turns:  # ARL402: self.async_reward_fn
            return 1.0
        return 0.0

    async def through_aliases_and_containers(self, data):
        score = self.async_reward_fn("p", "c")
        kept = score
        out = {"ok": True}
        out["reward"] = kept
        return out  # ARL402: self.async_reward_fn

    async def appended_then_returned(self, data):
        rewards = []
        for item in data:
            rewards.append(self.async_reward_fn(item, "c"))
        return rewards  # ARL402: self.async_reward_fn

    async def in_an_fstring_and_dict_call(self, data):
        reward = self.async_reward_fn("p", "c")
        log = f"reward={reward}"  # ARL402: self.async_reward_fn
        again = self.async_reward_fn("p", "c")
        return log, dict(reward=again)  # ARL402: self.async_reward_fn


class AnyKnownCoroutine:
    async def fetch(self, key):
        return key

    async def arun_episode(self, engine, data):
        """An episode's return value is its result: a coroutine in it is never run."""
        if data:
            return self.fetch(data)  # ARL203: self.fetch()
        resp = engine.agenerate(data)
        return [resp]  # ARL203: resp

    async def tensor_of_a_list(self, engine, data):
        value = self.fetch("x")
        total = torch.tensor([[value, 1.0]])  # ARL203: value
        counted = self.fetch("y")
        counted *= 2  # ARL203: counted
        return total, counted
