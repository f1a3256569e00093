# SPDX-License-Identifier: Apache-2.0
"""{{ cookiecutter.description }}"""

from __future__ import annotations
{% if cookiecutter.variant == "agent_openai" %}
from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI

from {{ cookiecutter.runtime }}.api.reward_api import AsyncRewardWrapper
from {{ cookiecutter.runtime }}.utils.dynamic_import import import_from_string


class {{ cookiecutter.class_name }}:
    """An agent: answers with the OpenAI SDK through the proxy; the reward scores the answer.

    ``run`` receives ``base_url``, ``http_client`` and ``api_key`` in ``extra_kwargs`` and
    returns ``{completion_id: reward}``.
    """

    def __init__(self, reward_fn: Callable[..., float] | str, max_tokens: int = 256) -> None:
        if isinstance(reward_fn, str):
            reward_fn = import_from_string(reward_fn)
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)
        self.max_tokens = max_tokens

    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> dict[str, float]:
        client = AsyncOpenAI(
            base_url=extra_kwargs["base_url"],
            http_client=extra_kwargs["http_client"],
            api_key=extra_kwargs["api_key"],
            max_retries=0,
        )
        completion = await client.chat.completions.create(
            model="default",
            messages=data["messages"],
            max_completion_tokens=self.max_tokens,
        )
        answer = completion.choices[0].message.content or ""
        task_data = {k: v for k, v in data.items() if k != "messages"}
        reward = await self.async_reward_fn(completions=answer, **task_data)
        return {completion.id: reward}
{% else %}
import uuid
from collections.abc import Callable
from typing import Any

import torch

from {{ cookiecutter.runtime }}.api.cli_args import GenerationHyperparameters
from {{ cookiecutter.runtime }}.api.engine_api import InferenceEngine
from {{ cookiecutter.runtime }}.api.io_struct import ModelRequest
from {{ cookiecutter.runtime }}.api.reward_api import AsyncRewardWrapper
from {{ cookiecutter.runtime }}.api.workflow_api import RolloutWorkflow
from {{ cookiecutter.runtime }}.utils.dynamic_import import import_from_string
{%- if cookiecutter.variant == "vision" %}
from {{ cookiecutter.runtime }}.utils.image import image2base64
{%- endif %}
{%- if cookiecutter.variant == "multi_turn" %}

FEEDBACK = "Your answer is not correct. Please try again."
{%- endif %}


class {{ cookiecutter.class_name }}(RolloutWorkflow):
    """{{ cookiecutter.description }}

{%- if cookiecutter.variant == "rlvr" %}
    One generation per episode, scored by ``reward_fn(prompt, completion, prompt_ids,
    completion_ids, **data)``; returns ``[1, L]`` tensors and ``rewards`` shaped ``[1]``.
{%- elif cookiecutter.variant == "multi_turn" %}
    Generates, scores, and on a wrong answer appends feedback and tries again, up to
    ``max_turns``. Feedback tokens are masked out of the loss; the reward is discounted by
    ``turn_discount`` per extra turn. Returns one ``[1, L]`` sequence.
{%- else %}
    One generation per episode on a prompt with images (``data["images"]``); the processor
    turns images and text into model inputs. Returns ``[1, L]`` tensors plus
    ``multi_modal_input``.
{%- endif %}
    """

    def __init__(
        self,
        reward_fn: Callable[..., float] | str,
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
{%- if cookiecutter.variant == "multi_turn" %}
        max_turns: int = {{ cookiecutter.max_turns }},
        turn_discount: float = {{ cookiecutter.turn_discount }},
{%- elif cookiecutter.variant == "vision" %}
        processor: Any = None,
{%- else %}
        enable_thinking: bool = False,
{%- endif %}
    ) -> None:
{%- if cookiecutter.variant == "multi_turn" %}
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if not 0 < turn_discount <= 1:
            raise ValueError(f"turn_discount must be in (0, 1], got {turn_discount}")
        self.max_turns = max_turns
        self.turn_discount = turn_discount
{%- elif cookiecutter.variant == "vision" %}
        if processor is None:
            raise ValueError("the vision workflow needs a processor (images + text -> inputs)")
        self.processor = processor
{%- else %}
        self.enable_thinking = enable_thinking
{%- endif %}
        if isinstance(reward_fn, str):
            reward_fn = import_from_string(reward_fn)
        self.tokenizer = tokenizer
        self.gconfig = gconfig.new(n_samples=1).new_with_stop_and_pad_token_ids(tokenizer)
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)
{% if cookiecutter.variant == "rlvr" %}
    async def arun_episode(
        self, engine: InferenceEngine, data: dict[str, Any]
    ) -> dict[str, torch.Tensor]:
        input_ids = self.tokenizer.apply_chat_template(
            data["messages"],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
            enable_thinking=self.enable_thinking,
        )
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=list(input_ids),
            gconfig=self.gconfig,
            tokenizer=self.tokenizer,
        )
        resp = await engine.agenerate(req)
        prompt = self.tokenizer.decode(resp.input_tokens)
        completion = self.tokenizer.decode(resp.output_tokens_without_stop)
        task_data = {k: v for k, v in data.items() if k != "messages"}
        reward = await self.async_reward_fn(
            prompt, completion, resp.input_tokens, resp.output_tokens, **task_data
        )
        n_in, n_out = resp.input_len, resp.output_len
        return {
            "input_ids": torch.tensor([resp.input_tokens + resp.output_tokens], dtype=torch.int32),
            "loss_mask": torch.tensor([[0] * n_in + [1] * n_out], dtype=torch.int32),
            "logprobs": torch.tensor([[0.0] * n_in + resp.output_logprobs], dtype=torch.float32),
            "versions": torch.tensor([[-1] * n_in + resp.output_versions], dtype=torch.int32),
            "attention_mask": torch.ones(1, n_in + n_out, dtype=torch.bool),
            "rewards": torch.tensor([reward], dtype=torch.float32),
        }
{%- elif cookiecutter.variant == "multi_turn" %}
    async def arun_episode(
        self, engine: InferenceEngine, data: dict[str, Any]
    ) -> dict[str, torch.Tensor]:
        messages = list(data["messages"])
        seq = list(
            self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=False
            )
        )
        loss_mask, logprobs, versions = [0] * len(seq), [0.0] * len(seq), [-1] * len(seq)
        task_data = {k: v for k, v in data.items() if k != "messages"}
        rid = uuid.uuid4().hex
        reward, turn = 0.0, 0
        for turn in range(1, self.max_turns + 1):
            req = ModelRequest(rid=rid, input_ids=list(seq), gconfig=self.gconfig, tokenizer=self.tokenizer)
            resp = await engine.agenerate(req)
            seq += resp.output_tokens
            loss_mask += [1] * resp.output_len
            logprobs += resp.output_logprobs
            versions += resp.output_versions
            completion = self.tokenizer.decode(resp.output_tokens_without_stop)
            prompt = self.tokenizer.decode(resp.input_tokens)
            reward = await self.async_reward_fn(
                prompt, completion, resp.input_tokens, resp.output_tokens, **task_data
            )
            if reward > 0 or turn == self.max_turns:
                break
            messages += [
                {"role": "assistant", "content": completion},
                {"role": "user", "content": FEEDBACK},
            ]
            feedback = self._feedback_tokens(messages)
            seq += feedback
            loss_mask += [0] * len(feedback)
            logprobs += [0.0] * len(feedback)
            versions += [-1] * len(feedback)
        reward *= self.turn_discount ** (turn - 1)
        return {
            "input_ids": torch.tensor([seq], dtype=torch.int32),
            "loss_mask": torch.tensor([loss_mask], dtype=torch.int32),
            "logprobs": torch.tensor([logprobs], dtype=torch.float32),
            "versions": torch.tensor([versions], dtype=torch.int32),
            "attention_mask": torch.ones(1, len(seq), dtype=torch.bool),
            "rewards": torch.tensor([reward], dtype=torch.float32),
        }

    def _feedback_tokens(self, messages: list[dict[str, Any]]) -> list[int]:
        """The tokens the chat template adds for the feedback turn (a diff of two renders)."""
        with_feedback = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        without = self.tokenizer.apply_chat_template(
            messages[:-1], add_generation_prompt=False, tokenize=True, return_dict=False
        )
        return list(with_feedback[len(without) :])
{%- else %}
    async def arun_episode(
        self, engine: InferenceEngine, data: dict[str, Any]
    ) -> dict[str, Any]:
        text = self.tokenizer.apply_chat_template(
            data["messages"], add_generation_prompt=True, tokenize=False
        )
        inputs = self.processor(images=data["images"], text=text)
        input_ids = [int(t) for t in inputs["input_ids"]]
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=input_ids,
            gconfig=self.gconfig,
            tokenizer=self.tokenizer,
            image_data=image2base64(data["images"]),  # servers take base64 images
            processor=self.processor,
        )
        resp = await engine.agenerate(req)
        prompt = self.tokenizer.decode(resp.input_tokens)
        completion = self.tokenizer.decode(resp.output_tokens_without_stop)
        task_data = {k: v for k, v in data.items() if k not in ("messages", "images")}
        reward = await self.async_reward_fn(
            prompt, completion, resp.input_tokens, resp.output_tokens, **task_data
        )
        n_in, n_out = resp.input_len, resp.output_len
        return {
            "input_ids": torch.tensor([resp.input_tokens + resp.output_tokens], dtype=torch.int64),
            "loss_mask": torch.tensor([[0] * n_in + [1] * n_out], dtype=torch.int32),
            "logprobs": torch.tensor([[0.0] * n_in + resp.output_logprobs], dtype=torch.float32),
            "versions": torch.tensor([[-1] * n_in + resp.output_versions], dtype=torch.int32),
            "attention_mask": torch.ones(1, n_in + n_out, dtype=torch.bool),
            "rewards": torch.tensor([reward], dtype=torch.float32),
            "multi_modal_input": [{"pixel_values": torch.as_tensor(inputs["pixel_values"])}],
        }
{%- endif %}
{% endif -%}
