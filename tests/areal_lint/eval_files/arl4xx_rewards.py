from areal.api import AsyncRewardWrapper
from areal.reward.gsm8k import gsm8k_reward_fn
from areal.reward.judge import parse_judge_reward


def compute_score(completion, answer):
    return 1.0


class Workflow:
    def __init__(self, reward_fn):
        self.reward_fn = reward_fn
        self.async_reward_fn = AsyncRewardWrapper(self.reward_fn)

        def nested(completion):
            return 1.0

        self.bad = AsyncRewardWrapper(lambda c: 1.0)  # ARL403: a lambda
        self.bad2 = AsyncRewardWrapper(nested)  # ARL403: nested function nested
        self.bad3 = AsyncRewardWrapper(self.judge)  # ARL404: self.judge

    async def judge(self, completion):
        return 1.0

    async def arun_episode(self, engine, data):
        reward = compute_score(data["c"], data["a"])  # ARL401: compute_score
        r2 = gsm8k_reward_fn("p", "c", [], [], answer="1")  # ARL401: areal.reward.gsm8k.gsm8k_reward_fn
        r3 = self.reward_fn("p", "c")  # ARL401: reward_fn
        r4 = parse_judge_reward("yes")  # ARL401: areal.reward.judge.parse_judge_reward
        ok = await self.async_reward_fn("p", "c")
        total = sum([reward, r2])
        return reward, r2, r3, r4, ok, total


def build_wrappers():
    async def nested_async(completion):
        return 1.0

    def nested(completion):
        return 1.0

    in_thread = AsyncRewardWrapper(lambda c: 1.0, mode="thread")  # never pickled: silent
    inline = AsyncRewardWrapper(nested, mode="inline")
    in_process = AsyncRewardWrapper(nested, mode="process")  # ARL403: nested function nested
    bad = AsyncRewardWrapper(nested_async)  # ARL404: nested_async
    return in_thread, inline, in_process, bad


async def verl_style_step(batch, reward_fn):
    from verl.trainer.ppo.reward import compute_reward

    reward_tensor, extra = compute_reward(batch, reward_fn)  # ARL401: verl.trainer.ppo.reward.compute_reward
    return reward_tensor, extra


async def tau2_style_episode(task, simulation):
    from tau2.evaluator.evaluator import evaluate_simulation

    reward_info = evaluate_simulation(task=task, simulation=simulation)  # ARL401: tau2.evaluator.evaluator.evaluate_simulation
    return reward_info
