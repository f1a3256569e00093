# SPDX-License-Identifier: Apache-2.0
"""Every mirrored public name: same parameters (names, kinds, defaults) and dataclass fields."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from .conftest import mod

# (module, attribute) pairs the runtime mirrors with an identical signature.
MIRRORED = [
    ("api.cli_args", "GenerationHyperparameters"),
    ("api.cli_args", "GenerationHyperparameters.new"),
    ("api.cli_args", "GenerationHyperparameters.new_with_stop_and_pad_token_ids"),
    ("api.cli_args", "GenerationHyperparameters.to_openai_args_dict"),
    ("api.cli_args", "GenerationHyperparameters.to_openai_completions_args_dict"),
    ("api.cli_args", "GenerationHyperparameters.to_openai_responses_args_dict"),
    ("api.io_struct", "ModelRequest"),
    ("api.io_struct", "ModelRequest.copy"),
    ("api.io_struct", "ModelResponse"),
    ("api.workflow_api", "RolloutWorkflow.arun_episode"),
    ("api.engine_api", "InferenceEngine.agenerate"),
    ("utils.data", "concat_padded_tensors"),
    ("utils.data", "pad_sequences_to_tensors"),
    ("utils.data", "collate_samples_to_list"),
    ("utils.data", "get_batch_size"),
    ("utils.dynamic_import", "import_from_string"),
    ("utils.hf_utils", "apply_chat_template"),
    ("utils.hf_utils", "load_hf_tokenizer"),
    ("utils.hf_utils", "load_hf_processor_and_tokenizer"),
    ("utils.image", "image2base64"),
    ("utils.image", "pad_images_batch_to_max_size"),
    ("utils.stats_tracker", "get"),
    ("utils.logging", "getLogger"),
    ("infra.workflow_context", "WorkflowContext"),
    ("infra.workflow_context", "get"),
    ("infra.workflow_context", "stat_scope"),
    ("infra.workflow_context", "get_httpx_client"),
    ("infra.workflow_context", "get_aiohttp_session"),
    ("reward", "MathVerifyWorker"),
    ("reward", "MathVerifyWorker.verify"),
    ("reward", "get_math_verify_worker"),
    ("reward", "gsm8k_reward_fn"),
    ("reward", "geometry3k_reward_fn"),
    ("reward", "clevr_count_70k_reward_fn"),
    ("reward.geometry3k", "extract_answer"),
    ("reward.clevr_count_70k", "extract_answer"),
    ("workflow.rlvr", "RLVRWorkflow"),
    ("workflow.rlvr", "RLVRWorkflow._compute_rewards"),
    ("workflow.rlvr", "RLVRWorkflow._collect_samples"),
    ("workflow.rlvr", "RLVRWorkflow.arun_episode"),
    ("workflow.rlvr", "default_get_input_ids_fn"),
    ("workflow.rlvr", "default_data_extract_prompt_fn"),
    ("workflow.multi_turn", "MultiTurnWorkflow"),
    ("workflow.vision_rlvr", "VisionRLVRWorkflow"),
    ("workflow.vision_rlvr", "VisionRLVRWorkflow._compute_rewards"),
    ("experimental.openai", "ArealOpenAI"),
    ("experimental.openai.proxy.workflow", "OpenAIProxyWorkflow"),
] + [
    ("utils.perf_tracer", name)
    for name in (
        "trace_session",
        "session_context",
        "trace_perf",
        "trace_session_phase",
        "atrace_session_phase",
        "trace_scope",
        "atrace_scope",
        "trace_session_event",
        "instant",
        "save",
        "is_configured",
        "set_task_id",
        "get_task_id",
        "set_session_id",
        "get_session_id",
    )
]


def resolve(pkg: str, module: str, attr: str) -> Any:
    obj: Any = mod(pkg, module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def shape(obj: Any) -> list[tuple[str, str, str]]:
    """Parameter names, kinds and defaults; ``**kwargs`` matches ``**_`` (callers cannot tell)."""
    params = []
    for p in inspect.signature(obj).parameters.values():
        name = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else p.name
        default = p.default
        if default is p.empty:
            text = "-"
        elif callable(default):
            text = getattr(default, "__name__", repr(default))
        else:
            text = repr(default)
        params.append((name, p.kind.name, text))
    return params


@pytest.mark.parametrize(("module", "attr"), MIRRORED, ids=lambda v: v)
def test_signature_is_areals(module: str, attr: str) -> None:
    assert shape(resolve("areal_runtime", module, attr)) == shape(resolve("areal", module, attr))


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("api.cli_args", "GenerationHyperparameters"),
        ("api.io_struct", "ModelRequest"),
        ("api.io_struct", "ModelResponse"),
        ("infra.workflow_context", "WorkflowContext"),
    ],
)
def test_dataclass_fields_and_defaults_are_areals(module: str, name: str) -> None:
    def fields(pkg: str) -> list[tuple[str, Any]]:
        out = []
        for f in dataclasses.fields(resolve(pkg, module, name)):
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
                default = type(default) if f.name == "gconfig" else default
            else:
                default = dataclasses.MISSING
            if f.name == "rid":  # a fresh uuid each time: compare the type only
                default = type(default)
            out.append((f.name, default))
        return out

    runtime, areal = fields("areal_runtime"), fields("areal")
    assert [n for n, _ in runtime] == [n for n, _ in areal]
    for (field_name, got), (_, want) in zip(runtime, areal, strict=True):
        if field_name == "gconfig":
            continue  # each package's own GenerationHyperparameters, compared above
        assert got == want or (got != got and want != want), field_name  # NaN-safe


def test_deliberate_async_reward_wrapper_adds_keyword_only_options() -> None:
    """AReaL's four parameters come first with AReaL's defaults; ``mode`` and ``fallback`` are
    keyword-only additions (process/thread/inline execution, opt-in value on failure)."""
    areal = shape(resolve("areal", "api.reward_api", "AsyncRewardWrapper"))
    runtime = shape(resolve("areal_runtime", "api.reward_api", "AsyncRewardWrapper"))
    assert runtime[: len(areal)] == areal
    assert [(n, k) for n, k, _ in runtime[len(areal) :]] == [
        ("mode", "KEYWORD_ONLY"),
        ("fallback", "KEYWORD_ONLY"),
    ]
