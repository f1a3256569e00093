# SPDX-License-Identifier: Apache-2.0
"""Small workflows with one train-inference bug each (and correct ones) for the check's tests.

Each buggy workflow is written the way the bug is written in real code; the docstring names
the bug. They take ``gconfig`` and ``tokenizer`` like AReaL workflows, so ``areal-devkit check``
fills them in.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from openai import AsyncOpenAI

from areal_runtime.api import GenerationHyperparameters, ModelRequest, RolloutWorkflow
from areal_runtime.experimental.openai import ArealOpenAI

FEEDBACK = "Are you sure?"
# Qwen3 with enable_thinking=False puts an empty think block in the generation prompt but
# drops it when it renders the history, so re-rendered history is not a prefix.
EMPTY_THINK = "<think>\n\n</think>\n\n"


def tensors(
    ids: list[int], mask: list[int], logprobs: list[float], versions: list[int]
) -> dict[str, torch.Tensor]:
    return {
        "input_ids": torch.tensor([ids], dtype=torch.int32),
        "loss_mask": torch.tensor([mask], dtype=torch.int32),
        "logprobs": torch.tensor([logprobs], dtype=torch.float32),
        "versions": torch.tensor([versions], dtype=torch.int32),
        "attention_mask": torch.ones(1, len(ids), dtype=torch.bool),
        "rewards": torch.tensor([0.0]),
    }


class SingleTurn(RolloutWorkflow):
    """Correct: the trajectory is exactly what the engine saw and sampled."""

    def __init__(self, gconfig: GenerationHyperparameters, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.gconfig = gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(tokenizer)

    def prompt(self, messages: list[dict[str, Any]]) -> list[int]:
        return list(
            self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=False
            )
        )

    async def generate(self, engine: Any, ids: list[int]) -> Any:
        req = ModelRequest(input_ids=ids, gconfig=self.gconfig, tokenizer=self.tokenizer)
        return await engine.agenerate(req)

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        resp = await self.generate(engine, self.prompt(data["messages"]))
        return self.build(resp)

    def build(self, resp: Any) -> dict[str, Any]:
        n_in, n_out = resp.input_len, resp.output_len
        return tensors(
            resp.input_tokens + resp.output_tokens,
            [0] * n_in + [1] * n_out,
            [0.0] * n_in + resp.output_logprobs,
            [-1] * n_in + resp.output_versions,
        )


class RetokenizedCompletion(SingleTurn):
    """Bug: the completion is decoded and encoded again, so the sampled EOS is lost."""

    def build(self, resp: Any) -> dict[str, Any]:
        text = self.tokenizer.decode(resp.output_tokens_without_stop)
        completion = self.tokenizer.encode(text, add_special_tokens=False)
        n_in, n_out = resp.input_len, len(completion)
        return tensors(
            resp.input_tokens + completion,
            [0] * n_in + [1] * n_out,
            [0.0] * n_in + resp.output_logprobs[:n_out],
            [-1] * n_in + resp.output_versions[:n_out],
        )


class ShiftedLogprobs(SingleTurn):
    """Bug: logprobs stored one position early (the "logits predict the next token" mix-up)."""

    def build(self, resp: Any) -> dict[str, Any]:
        traj = super().build(resp)
        n_in = resp.input_len
        traj["logprobs"] = torch.tensor([[0.0] * (n_in - 1) + resp.output_logprobs + [0.0]])
        return traj


class PlaceholderLogprobs(SingleTurn):
    """Bug: logprobs never recorded; zeros stand in for them."""

    def build(self, resp: Any) -> dict[str, Any]:
        traj = super().build(resp)
        traj["logprobs"] = torch.zeros_like(traj["logprobs"])
        return traj


class NoLogprobsKey(SingleTurn):
    """Bug: the trajectory has no logprobs at all."""

    def build(self, resp: Any) -> dict[str, Any]:
        traj = super().build(resp)
        del traj["logprobs"]
        return traj


class PromptInLossMask(SingleTurn):
    """Bug: the loss mask covers the prompt too."""

    def build(self, resp: Any) -> dict[str, Any]:
        traj = super().build(resp)
        traj["loss_mask"] = torch.ones_like(traj["loss_mask"])
        return traj


class MultiTurn(SingleTurn):
    """Correct: two turns in one row, the second prompt = first prompt + completion + feedback."""

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        messages = list(data["messages"])
        seq = self.prompt(messages)
        mask, logprobs, versions = [0] * len(seq), [0.0] * len(seq), [-1] * len(seq)
        for turn in range(2):
            resp = await self.generate(engine, list(seq))
            seq += resp.output_tokens
            mask += [1] * resp.output_len
            logprobs += resp.output_logprobs
            versions += resp.output_versions
            if turn == 0:
                answer = self.tokenizer.decode(resp.output_tokens_without_stop)
                messages += [
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": FEEDBACK},
                ]
                before = self.tokenizer.apply_chat_template(
                    messages[:-1], tokenize=True, return_dict=False
                )
                feedback = self.prompt(messages)[len(before) :]
                seq += feedback
                mask += [0] * len(feedback)
                logprobs += [0.0] * len(feedback)
                versions += [-1] * len(feedback)
        return tensors(seq, mask, logprobs, versions)


class RerenderedMultiTurn(SingleTurn):
    """Bug: each turn's prompt is re-rendered from text (Qwen3-style empty think block).

    The generation prompt carries an empty think block, the re-rendered history does not, so
    turn 2's prompt does not extend turn 1's tokens; the final prompt + completion is trained.
    """

    def prompt(self, messages: list[dict[str, Any]]) -> list[int]:
        return super().prompt(messages) + self.tokenizer.encode(
            EMPTY_THINK, add_special_tokens=False
        )

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        messages = list(data["messages"])
        for turn in range(2):
            resp = await self.generate(engine, self.prompt(messages))
            answer = self.tokenizer.decode(resp.output_tokens_without_stop)
            if turn == 0:
                messages += [
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": FEEDBACK},
                ]
        return self.build(resp)


class ProxyAgent:
    """Correct: a two-turn agent on the OpenAI SDK through the proxy (exported per completion)."""

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float:
        client = AsyncOpenAI(**extra_kwargs, max_retries=0)
        messages = list(data["messages"])
        for _ in range(2):
            completion = await client.chat.completions.create(
                model="default", messages=messages, max_completion_tokens=16
            )
            messages += [
                completion.choices[0].message.model_dump(exclude_none=True),
                {"role": "user", "content": FEEDBACK},
            ]
        return 1.0


class ChatTextAgentWorkflow(SingleTurn):
    """Bug: an agent's trajectory built from the chat reply's text and logprobs (EOS lost)."""

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        client = ArealOpenAI(engine=engine, tokenizer=self.tokenizer)
        completion = await client.chat.completions.create(
            messages=data["messages"], max_completion_tokens=16, logprobs=True
        )
        choice = completion.choices[0]
        prompt = self.prompt(data["messages"])
        answer = self.tokenizer.encode(choice.message.content or "", add_special_tokens=False)
        logprobs = [item.logprob for item in choice.logprobs.content]
        n_in, n_out = len(prompt), len(answer)
        return tensors(
            prompt + answer,
            [0] * n_in + [1] * n_out,
            [0.0] * n_in + logprobs[:n_out],
            [-1] * n_in + [engine.get_version()] * n_out,
        )


class BlocksTheLoop(SingleTurn):
    """Bug: a consistent trajectory, but a blocking call on the event loop every episode."""

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        resp = await self.generate(engine, self.prompt(data["messages"]))
        time.sleep(0.3)  # noqa: ARL110  (the bug under test: every other episode waits)
        return self.build(resp)


class NeedsAModelName(SingleTurn):
    """Correct, but its constructor needs an argument no default fills."""

    def __init__(self, gconfig: GenerationHyperparameters, tokenizer: Any, model_name: str) -> None:
        super().__init__(gconfig, tokenizer)
        self.model_name = model_name
