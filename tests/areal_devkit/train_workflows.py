# SPDX-License-Identifier: Apache-2.0
"""Small workflows the train tests run: multi-turn, agent, and deliberately broken ones."""

from __future__ import annotations

import time
import uuid
from typing import Any

import torch

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.models.default_model import arithmetic_reward
from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow


class NoLogprobsWorkflow(ArithmeticRLVRWorkflow):
    """Forgets to return the engine's logprobs."""

    async def arun_episode(self, engine, data):
        traj = await super().arun_episode(engine, data)
        del traj["logprobs"]
        return traj


class ShiftedMaskWorkflow(ArithmeticRLVRWorkflow):
    """The classic off-by-one: the loss mask starts one token early (on the prompt's end)."""

    async def arun_episode(self, engine, data):
        traj = await super().arun_episode(engine, data)
        traj["loss_mask"] = torch.roll(traj["loss_mask"], shifts=-1, dims=1)
        traj["logprobs"] = torch.roll(traj["logprobs"], shifts=-1, dims=1)
        return traj


class MultiTurnArithmetic(RolloutWorkflow):
    """Two turns in one sequence: answer, hear "Again?", answer again; reward on the last."""

    def __init__(self, gconfig: GenerationHyperparameters, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.gconfig = gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(tokenizer)
        self.reward = AsyncRewardWrapper(arithmetic_reward)

    async def arun_episode(self, engine, data):
        messages = list(data["messages"])
        ids = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        seq, mask, lps, vers = list(ids), [0] * len(ids), [0.0] * len(ids), [-1] * len(ids)
        reward = 0.0
        for turn in range(2):
            req = ModelRequest(
                rid=uuid.uuid4().hex,
                input_ids=list(seq),
                gconfig=self.gconfig,
                tokenizer=self.tokenizer,
            )
            resp = await engine.agenerate(req)
            seq += resp.output_tokens
            mask += [1] * resp.output_len
            lps += resp.output_logprobs
            vers += resp.output_versions
            text = self.tokenizer.decode(resp.output_tokens, skip_special_tokens=True)
            reward = await self.reward("", text, None, None, answer=data["answer"])
            if turn == 0:
                follow = self.tokenizer.encode(
                    "\n<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n",
                    add_special_tokens=False,
                )
                seq += follow
                mask += [0] * len(follow)
                lps += [0.0] * len(follow)
                vers += [-1] * len(follow)
        n = len(seq)
        return {
            "input_ids": torch.tensor([seq], dtype=torch.int32),
            "loss_mask": torch.tensor([mask], dtype=torch.int32),
            "logprobs": torch.tensor([lps], dtype=torch.float32),
            "versions": torch.tensor([vers], dtype=torch.int32),
            "attention_mask": torch.ones(1, n, dtype=torch.bool),
            "rewards": torch.tensor([reward], dtype=torch.float32),
        }


class ArithmeticAgent:
    """An agent workflow: talks to the proxy with the OpenAI client, returns its reward."""

    async def run(self, data, **kw):
        from openai import AsyncOpenAI

        client = AsyncOpenAI(
            base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"]
        )
        r = await client.chat.completions.create(
            model="default", messages=data["messages"], max_completion_tokens=6, temperature=1.0
        )
        return arithmetic_reward(
            completions=r.choices[0].message.content or "", answer=data["answer"]
        )


class SometimesFailing(ArithmeticRLVRWorkflow):
    """Rejects every episode whose answer is a multiple of 5: the summary must say why."""

    async def arun_episode(self, engine, data):
        if int(data["answer"]) % 5 == 0:
            raise ValueError("multiples of 5 are not supported")
        return await super().arun_episode(engine, data)


class ConstantRewardWorkflow(ArithmeticRLVRWorkflow):
    """A reward that ignores the answer: every sample scores 0, so no group has variance."""

    async def arun_episode(self, engine, data):
        traj = await super().arun_episode(engine, data)
        traj["rewards"] = torch.zeros_like(traj["rewards"])
        return traj


class BlocksTheLoop(ArithmeticRLVRWorkflow):
    """A blocking call in the episode: every other episode and the engine's batch wait."""

    async def arun_episode(self, engine, data):
        time.sleep(0.15)  # noqa: ARL110  (the bug under test)
        return await super().arun_episode(engine, data)
