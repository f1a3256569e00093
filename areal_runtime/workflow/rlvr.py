# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``RLVRWorkflow``: one completion per prompt, scored by a verifiable reward.

Constructor, hook methods (``_compute_rewards``, ``_collect_samples``) and the returned tensors
match AReaL's, so subclasses port unchanged. ``reward_fn``, ``get_input_ids_fn`` and
``data_extract_prompt_fn`` may be import strings; a string reward is imported on first episode.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from areal_runtime import workflow_context
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.dynamic_import import import_from_string
from areal_runtime.utils.hf_utils import apply_chat_template
from areal_runtime.utils.perf_tracer import atrace_session_phase, session_context, trace_session
from areal_runtime.workflow._tensors import single_sequence


def default_get_input_ids_fn(data: Any, tokenizer: Any, enable_thinking: bool) -> list[int]:
    """The chat-templated prompt with the generation prompt appended."""
    return apply_chat_template(  # type: ignore[return-value]
        tokenizer, data, tokenize=True, add_generation_prompt=True, enable_thinking=enable_thinking
    )


def default_data_extract_prompt_fn(data: dict[str, Any]) -> Any:
    """The row's ``messages``."""
    return data["messages"]


class RLVRWorkflow(RolloutWorkflow):
    """Single-turn reward learning workflow supporting optional thinking tokens."""

    def __init__(
        self,
        reward_fn: Callable[..., Any] | str,
        gconfig: GenerationHyperparameters,
        tokenizer: Any,
        enable_thinking: bool = False,
        get_input_ids_fn: Callable[[Any, Any, bool], list[int]] | str = default_get_input_ids_fn,
        data_extract_prompt_fn: Callable[[dict[str, Any]], Any]
        | str = default_data_extract_prompt_fn,
    ) -> None:
        self.reward_fn = reward_fn
        if isinstance(tokenizer, str):
            from areal_runtime.utils.hf_utils import load_hf_tokenizer

            tokenizer = load_hf_tokenizer(tokenizer)
        self.tokenizer = tokenizer
        self.gconfig = gconfig.new_with_stop_and_pad_token_ids(tokenizer)
        self.enable_thinking = enable_thinking
        if not isinstance(reward_fn, str):
            self.async_reward_fn = AsyncRewardWrapper(reward_fn)
        if isinstance(get_input_ids_fn, str):
            get_input_ids_fn = import_from_string(get_input_ids_fn)
        self.get_input_ids_fn = get_input_ids_fn
        if isinstance(data_extract_prompt_fn, str):
            data_extract_prompt_fn = import_from_string(data_extract_prompt_fn)
        self.data_extract_prompt_fn = data_extract_prompt_fn

    def _resolve_reward_fn(self) -> None:
        # A string reward is imported in the rollout process, not where the workflow was built.
        if isinstance(self.reward_fn, str):
            self.reward_fn = import_from_string(self.reward_fn)
            self.async_reward_fn = AsyncRewardWrapper(self.reward_fn)

    @trace_session("reward")
    async def _compute_rewards(
        self, resp: ModelResponse, prompt_str: str, task_data: dict[str, Any]
    ) -> float:
        """The reward of ``resp``, called positionally as AReaL's reward contract says."""
        completions_str = self.tokenizer.decode(resp.output_tokens)
        return await self.async_reward_fn(
            prompt_str, completions_str, resp.input_tokens, resp.output_tokens, **task_data
        )

    @session_context()
    async def _collect_samples(
        self,
        engine: InferenceEngine,
        req: ModelRequest,
        prompt_str: str,
        task_data: dict[str, Any],
    ) -> tuple[ModelResponse, float]:
        """Generate one completion, score it and log the reward under the episode's scope."""
        async with atrace_session_phase("generate"):
            resp = await engine.agenerate(req)
        reward = await self._compute_rewards(resp, prompt_str, task_data)
        stats_tracker.get(workflow_context.stat_scope()).scalar(reward=reward)
        return resp, reward

    async def arun_episode(self, engine: InferenceEngine, data: dict[str, Any]) -> dict[str, Any]:
        self._resolve_reward_fn()
        input_ids = self.get_input_ids_fn(
            self.data_extract_prompt_fn(data), self.tokenizer, self.enable_thinking
        )
        req = ModelRequest(
            rid=uuid.uuid4().hex,
            input_ids=input_ids,
            gconfig=self.gconfig.new(n_samples=1),
            tokenizer=self.tokenizer,
        )
        prompt_str = self.tokenizer.decode(input_ids)
        resp, reward = await self._collect_samples(engine, req, prompt_str, data)
        return single_sequence(resp, reward)
