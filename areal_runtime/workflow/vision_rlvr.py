# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``VisionRLVRWorkflow``: ``RLVRWorkflow`` for a vision-language model.

The processor tokenizes ``data["messages"]`` with ``data["images"]``; the images go to the engine
as base64 (``ModelRequest.image_data``), the reward function is called with keyword arguments,
and the trajectory adds ``mm_token_type_ids`` and ``multi_modal_input`` (pixel values, and
``image_grid_thw`` when the processor gives it), as in AReaL.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.utils.image import image2base64
from areal_runtime.utils.perf_tracer import trace_session
from areal_runtime.workflow.rlvr import RLVRWorkflow


class VisionRLVRWorkflow(RLVRWorkflow):
    """Single-turn RLVR on image + text prompts."""

    def __init__(
        self,
        reward_fn: Callable[..., Any] | str,
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
        processor: Any,
        enable_thinking: bool,
    ) -> None:
        super().__init__(reward_fn, gconfig, tokenizer, enable_thinking)
        if isinstance(processor, str):
            from transformers import AutoProcessor

            processor = AutoProcessor.from_pretrained(processor)
        self.processor = processor

    @trace_session("reward")
    async def _compute_rewards(
        self, resp: ModelResponse, prompt_str: str, task_data: dict[str, Any]
    ) -> float:
        """The reward of ``resp``; keyword arguments here, unlike the text workflow."""
        return await self.async_reward_fn(
            prompt=prompt_str,
            completions=self.tokenizer.decode(resp.output_tokens),
            prompt_ids=resp.input_tokens,
            completion_ids=resp.output_tokens,
            **task_data,
        )

    async def arun_episode(self, engine: InferenceEngine, data: dict[str, Any]) -> dict[str, Any]:
        import torch

        self._resolve_reward_fn()
        processed = self.processor(
            images=data["images"], text=data["messages"], padding=False, return_tensors="pt"
        )
        input_ids: list[int] = processed["input_ids"].tolist()[0]
        mm_token_type_ids: list[int] = processed["mm_token_type_ids"].tolist()[0]
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=input_ids,
            image_data=image2base64(data["images"]),
            vision_msg_vllm=[data["messages_chat"]] if "messages_chat" in data else None,
            gconfig=self.gconfig.new(n_samples=1),
            tokenizer=self.tokenizer,
            processor=self.processor,
        )
        prompt_str = self.tokenizer.decode(input_ids)
        resp, reward = await self._collect_samples(engine, req, prompt_str, data)
        seq = resp.input_tokens + resp.output_tokens
        multi_modal_input = {"pixel_values": processed["pixel_values"]}
        if "image_grid_thw" in processed:
            multi_modal_input["image_grid_thw"] = processed["image_grid_thw"]

        def row(values: list[Any], dtype: Any) -> Any:
            return torch.tensor(values, dtype=dtype).unsqueeze(0)

        return {
            "input_ids": row(seq, torch.long),
            "mm_token_type_ids": row(mm_token_type_ids + [0] * resp.output_len, torch.long),
            "loss_mask": row([0] * resp.input_len + [1] * resp.output_len, torch.int32),
            "logprobs": row([0.0] * resp.input_len + resp.output_logprobs, torch.float32),
            "multi_modal_input": [multi_modal_input],
            "versions": row([-1] * resp.input_len + resp.output_versions, torch.int32),
            "attention_mask": torch.ones(len(seq), dtype=torch.bool).unsqueeze(0),
            "rewards": torch.tensor(reward, dtype=torch.float32).unsqueeze(0),
        }
