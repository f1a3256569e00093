# SPDX-License-Identifier: Apache-2.0
"""``RLVRWorkflow``: one prompt, one completion, a verifiable reward (``areal.workflow.rlvr``).

The constructor takes what AReaL's does (``reward_fn`` as a function or import string,
``gconfig``, ``tokenizer`` as a tokenizer or a path, ``enable_thinking``), so
``examples/math/gsm8k_rl.py``'s ``workflow_kwargs`` work unchanged. Rows carry ``messages``;
every other field goes to the reward function as a keyword.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.utils import stats_tracker


class RLVRWorkflow(RolloutWorkflow):
    def __init__(
        self,
        reward_fn: Callable[..., Any] | str,
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
        enable_thinking: bool = False,
    ) -> None:
        if isinstance(tokenizer, str):
            from areal_runtime.utils.hf_utils import load_hf_tokenizer

            tokenizer = load_hf_tokenizer(tokenizer)
        if isinstance(reward_fn, str):
            from areal_runtime.utils.dynamic_import import import_from_string

            reward_fn = import_from_string(reward_fn)
        self.tokenizer = tokenizer
        self.enable_thinking = enable_thinking
        self.gconfig = gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(tokenizer)
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        import torch

        from areal_runtime.utils.hf_utils import apply_chat_template

        input_ids = apply_chat_template(
            self.tokenizer,
            data["messages"],
            add_generation_prompt=True,
            enable_thinking=self.enable_thinking,
        )
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=list(input_ids),
            gconfig=self.gconfig,
            tokenizer=self.tokenizer,
        )
        resp = await engine.agenerate(req)
        prompt_str = self.tokenizer.decode(resp.input_tokens)
        completion_str = self.tokenizer.decode(resp.output_tokens)
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
            "rewards": torch.tensor([float(reward)], dtype=torch.float32),
        }
