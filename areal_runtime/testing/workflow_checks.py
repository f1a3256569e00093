# SPDX-License-Identifier: Apache-2.0
"""Assertions shared by generated workflow tests, kept here so each test file stays thin."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.utils.data import validate_trajectory


def assert_exported(package: str, cls: type) -> None:
    """``package`` exports ``cls``; a lazy ``__init__`` keeps ``__all__`` and ``_LAZY_IMPORTS`` in step."""
    module = importlib.import_module(package)
    assert getattr(module, cls.__name__) is cls, f"{package} does not export {cls.__name__}"
    assert cls.__name__ in module.__all__
    lazy = getattr(module, "_LAZY_IMPORTS", None)
    if lazy is not None:
        assert set(module.__all__) == set(lazy), "__all__ and _LAZY_IMPORTS differ"


def assert_single_turn_trajectory(
    traj: dict[str, Any], request: ModelRequest, *, logprob: float, version: int
) -> None:
    """The trajectory contract for one prompt + one completion, batch dimension 1.

    Each message says what to build each field from (the engine's ``ModelResponse``), because
    the person reading it is fixing a workflow, not this check.
    """
    validate_trajectory(traj, batch_size=1)
    prompt = list(request.input_ids)
    ids = traj["input_ids"][0].tolist()
    assert ids[: len(prompt)] == prompt, (
        "input_ids must start with the prompt the engine saw: build it from resp.input_tokens, "
        "not by rendering the chat again"
    )
    n_out = len(ids) - len(prompt)
    assert n_out > 0, (
        "input_ids hold no completion after the prompt: append the engine's resp.output_tokens "
        "(input_ids = resp.input_tokens + resp.output_tokens); re-tokenizing the decoded text "
        "loses tokens such as the EOS (a re-tokenized completion: areal-devkit check shows where)"
    )
    assert traj["loss_mask"][0].tolist() == [0] * len(prompt) + [1] * n_out, (
        "loss_mask must be 0 on the prompt and 1 on every generated token: "
        "[0] * resp.input_len + [1] * resp.output_len"
    )
    assert traj["logprobs"][0, : len(prompt)].abs().sum().item() == 0, (
        "logprobs must be 0.0 on prompt tokens: [0.0] * resp.input_len + resp.output_logprobs"
    )
    assert traj["logprobs"][0, len(prompt) :].tolist() == pytest.approx([logprob] * n_out), (
        "logprobs on the completion must be the engine's resp.output_logprobs, one per "
        "generated token (not recomputed, not shifted)"
    )
    assert traj["versions"][0].tolist() == [-1] * len(prompt) + [version] * n_out, (
        "versions must be -1 on the prompt and the engine's resp.output_versions on the "
        "completion: [-1] * resp.input_len + resp.output_versions"
    )
    assert bool(traj["attention_mask"].all()), (
        "attention_mask must be 1 on every token of an unpadded sequence: "
        "torch.ones(1, resp.input_len + resp.output_len, dtype=torch.bool)"
    )
    assert tuple(traj["rewards"].shape) == (1,), (
        f"rewards must hold one reward per sequence, shape (1,), got "
        f"{tuple(traj['rewards'].shape)}: torch.tensor([reward])"
    )


def chat_prompt(tokenizer: Any, messages: list[dict[str, Any]]) -> list[int]:
    return list(
        tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
    )
