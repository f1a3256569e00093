# SPDX-License-Identifier: Apache-2.0
"""Small workflows the executor tests run (importable by string)."""

import asyncio
import time

import torch

from areal_runtime import workflow_context
from areal_runtime.api import ModelRequest, RolloutWorkflow


def trajectory(length: int = 3, reward: float = 1.0) -> dict:
    return {
        "input_ids": torch.ones(1, length, dtype=torch.int32),
        "loss_mask": torch.tensor([[0] + [1] * (length - 1)], dtype=torch.int32),
        "logprobs": torch.zeros(1, length),
        "versions": torch.zeros(1, length, dtype=torch.int32),
        "attention_mask": torch.ones(1, length, dtype=torch.bool),
        "rewards": torch.tensor([reward]),
    }


class EchoWorkflow(RolloutWorkflow):
    """Returns a trajectory whose reward is data["reward"]; raises or returns None on request."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.seen: list[tuple] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def arun_episode(self, engine, data):
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            ctx = workflow_context.get()
            children = await asyncio.gather(
                asyncio.sleep(self.delay, result=workflow_context.get().task_id)
            )
            self.seen.append((ctx.task_id, ctx.is_eval, children[0]))
            if data.get("raise"):
                raise RuntimeError(f"boom {data['raise']}")
            if data.get("none"):
                return None
            if data.get("empty"):
                return {}
            return trajectory(data.get("length", 3), data.get("reward", 1.0))
        finally:
            self.in_flight -= 1


class SleepyWorkflow(RolloutWorkflow):
    async def arun_episode(self, engine, data):
        time.sleep(0.3)  # noqa: ARL110 - the stall detector must name this line
        return trajectory()


class GenerateWorkflow(RolloutWorkflow):
    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer

    async def arun_episode(self, engine, data):
        resp = await engine.agenerate(ModelRequest(input_ids=[1, 2], tokenizer=self.tokenizer))
        n = resp.output_len
        return trajectory(2 + n, 1.0)
