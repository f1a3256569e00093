# SPDX-License-Identifier: Apache-2.0
"""A single-turn RLVR workflow written exactly as for AReaL (swap ``areal_runtime`` for ``areal``).

Run it: ``areal-devkit run examples.arithmetic_rlvr:ArithmeticRLVRWorkflow``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import torch

from areal_runtime import workflow_context
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.models.default_model import arithmetic_reward
from areal_runtime.utils import stats_tracker


class ArithmeticRLVRWorkflow(RolloutWorkflow):
    """Ask one question, generate one answer, score it with a verifiable reward."""

    def __init__(
        self,
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
        reward_fn: Callable[..., float] = arithmetic_reward,
    ) -> None:
        self.tokenizer = tokenizer
        self.gconfig = gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(tokenizer)
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, torch.Tensor]:
        input_ids = self.tokenizer.apply_chat_template(
            data["messages"], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=list(input_ids),
            gconfig=self.gconfig,
            tokenizer=self.tokenizer,
        )
        resp = await engine.agenerate(req)
        prompt_str = self.tokenizer.decode(resp.input_tokens)
        completion_str = self.tokenizer.decode(resp.output_tokens_without_stop)
        reward = await self.async_reward_fn(
            prompt_str,
            completion_str,
            resp.input_tokens,
            resp.output_tokens,
            **{k: v for k, v in data.items() if k != "messages"},
        )
        stats_tracker.get(workflow_context.stat_scope()).scalar(reward=reward)
        n_in, n_out = resp.input_len, resp.output_len
        return {
            "input_ids": torch.tensor([resp.input_tokens + resp.output_tokens], dtype=torch.int32),
            "loss_mask": torch.tensor([[0] * n_in + [1] * n_out], dtype=torch.int32),
            "logprobs": torch.tensor([[0.0] * n_in + resp.output_logprobs], dtype=torch.float32),
            "versions": torch.tensor([[-1] * n_in + resp.output_versions], dtype=torch.int32),
            "attention_mask": torch.ones(1, n_in + n_out, dtype=torch.bool),
            "rewards": torch.tensor([reward], dtype=torch.float32),
        }
