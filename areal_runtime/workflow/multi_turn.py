# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``MultiTurnWorkflow``: retry the same question until the reward is non-zero.

Each retry appends the previous completion (plus EOS when it did not end with one) and a fixed
"your answer is wrong" user turn as token ids, so no re-tokenization changes earlier tokens. The
final reward is discounted by ``turn_discount`` per retry. Same constructor and tensors as AReaL.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.hf_utils import apply_chat_template

RETRY_MESSAGE = (
    "Your answer is either wrong or not parsable to the reward function. You may misunderstand "
    "the original question. Please carefully read the original question, check the previous "
    "errors, and try to answer it again."
)


def retry_prompt_ids(tokenizer: Any) -> list[int]:
    """The tokens the chat template adds for a user turn of ``RETRY_MESSAGE`` after an
    assistant turn, ending with the generation prompt (the difference of two templatings)."""
    messages = [{"role": "assistant", "content": "some random message."}]
    before = apply_chat_template(tokenizer, messages, tokenize=True)
    messages.append({"role": "user", "content": RETRY_MESSAGE})
    after = apply_chat_template(tokenizer, messages, tokenize=True, add_generation_prompt=True)
    return list(after[len(before) :])


class MultiTurnWorkflow(RolloutWorkflow):
    """Multi-attempt workflow that retries generation until the reward is positive."""

    def __init__(
        self,
        reward_fn: Callable[..., Any],
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
        max_turns: int,
        turn_discount: float,
    ) -> None:
        if max_turns <= 0:
            raise ValueError("max_turns must be positive")
        if not 0.0 < turn_discount <= 1.0:
            raise ValueError("turn_discount must be in (0, 1].")
        self.reward_fn = reward_fn
        self.gconfig = gconfig.new_with_stop_and_pad_token_ids(tokenizer)
        self.tokenizer = tokenizer
        self.max_turns = max_turns
        self.turn_discount = turn_discount
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)
        self.multi_turn_prompt_ids = retry_prompt_ids(tokenizer)

    async def arun_episode(self, engine: InferenceEngine, data: dict[str, Any]) -> dict[str, Any]:
        import torch

        seq: list[int] = []
        logprobs: list[float] = []
        loss_mask: list[int] = []
        versions: list[int] = []
        input_ids = list(
            apply_chat_template(
                self.tokenizer, data["messages"], tokenize=True, add_generation_prompt=True
            )
        )
        turns, reward, discount = 0, 0.0, 1.0
        while reward == 0.0 and turns < self.max_turns:
            req = ModelRequest(
                rid=uuid.uuid4().hex,
                input_ids=input_ids,
                gconfig=self.gconfig.new(n_samples=1),
                tokenizer=self.tokenizer,
            )
            resp = await engine.agenerate(req)
            reward = await self.async_reward_fn(
                self.tokenizer.decode(input_ids),
                self.tokenizer.decode(resp.output_tokens),
                resp.input_tokens,
                resp.output_tokens,
                **data,
            )
            # Only the prompt tokens not already in seq are new (the engine echoes the prompt).
            new_prompt = len(resp.input_tokens) - len(seq)
            if seq and resp.input_tokens[:-new_prompt] != seq:
                raise AssertionError(
                    f"turn {turns}: the engine's input_tokens do not extend the episode so far "
                    f"({len(seq)} tokens)"
                )
            seq += resp.input_tokens[-new_prompt:] + resp.output_tokens
            logprobs += [0.0] * new_prompt + resp.output_logprobs
            loss_mask += [0] * new_prompt + [1] * resp.output_len
            versions += [-1] * new_prompt + resp.output_versions
            turns += 1
            if reward == 0.0 and turns < self.max_turns:
                input_ids = input_ids + resp.output_tokens
                if resp.output_tokens and resp.output_tokens[-1] != self.tokenizer.eos_token_id:
                    input_ids.append(self.tokenizer.eos_token_id)
                input_ids += self.multi_turn_prompt_ids
                discount *= self.turn_discount
        reward = float(reward * discount)
        stats_tracker.get(workflow_context.stat_scope()).scalar(reward=reward, num_turns=turns)
        columns = {
            "input_ids": torch.tensor(seq, dtype=torch.int32),
            "logprobs": torch.tensor(logprobs, dtype=torch.float32),
            "loss_mask": torch.tensor(loss_mask, dtype=torch.int32),
            "versions": torch.tensor(versions, dtype=torch.int32),
            "rewards": torch.tensor(reward, dtype=torch.float32),
            "attention_mask": torch.ones(len(seq), dtype=torch.bool),
        }
        return {key: value.unsqueeze(0) for key, value in columns.items()}
