# SPDX-License-Identifier: Apache-2.0
"""areal_runtime.workflow's RLVR, multi-turn and vision workflows return exactly what AReaL's
return, on the same rows, script and tokenizer; a subclass hook works the same in both."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from PIL import Image

from .conftest import mod
from .test_areal_workflows_on_runtime import ROWS, TinyVisionProcessor


def exact(
    prompt: str, completions: str, prompt_ids: Any, completion_ids: Any, answer: str, **_: Any
) -> float:
    return float(completions.split("<")[0].strip() == answer)


def build(pkg: str, kind: str, tokenizer: Any) -> Any:
    gconfig = mod(pkg, "api.cli_args").GenerationHyperparameters(max_new_tokens=8)
    if kind == "rlvr":
        return mod(pkg, "workflow.rlvr").RLVRWorkflow(
            exact, gconfig, tokenizer, enable_thinking=False
        )
    if kind == "multi_turn":
        return mod(pkg, "workflow.multi_turn").MultiTurnWorkflow(exact, gconfig, tokenizer, 3, 0.5)
    processor = TinyVisionProcessor(tokenizer)
    return mod(pkg, "workflow.vision_rlvr").VisionRLVRWorkflow(
        exact, gconfig, tokenizer, processor, False
    )


def rows(kind: str) -> list[dict[str, Any]]:
    if kind != "vision":
        return ROWS
    image = Image.new("RGB", (4, 4), (9, 9, 9))
    return [
        {"images": [image], "messages": r["messages"][0]["content"], "answer": r["answer"]}
        for r in ROWS
    ]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["rlvr", "multi_turn", "vision"])
async def test_trajectories_equal_areals(
    kind: str, scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    script = ["5", "wrong", "17", "no", "nope", "8"]
    out = {}
    for pkg in ("areal", "areal_runtime"):
        engine = scripted_engine(script, cycle=True)
        workflow = build(pkg, kind, tiny_tokenizer)
        out[pkg] = [await workflow.arun_episode(engine, row) for row in rows(kind)]
        out[pkg + ".requests"] = [(r.input_ids, r.gconfig.stop_token_ids) for r in engine.requests]
    assert out["areal_runtime.requests"] == out["areal.requests"]
    assert same(out["areal_runtime"], out["areal"])
    assert [t["rewards"].item() for t in out["areal"]] != [0.0, 0.0, 0.0]  # the script scores


@pytest.mark.asyncio
@pytest.mark.parametrize("pkg", ["areal", "areal_runtime"])
async def test_a_subclass_overriding_compute_rewards_ports(
    pkg: str, scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    base = mod(pkg, "workflow.rlvr").RLVRWorkflow

    class Constant(base):  # type: ignore[misc, valid-type]
        async def _compute_rewards(self, resp: Any, prompt_str: str, task_data: dict) -> float:
            return 0.25

    gconfig = mod(pkg, "api.cli_args").GenerationHyperparameters(max_new_tokens=4)
    traj = await Constant(exact, gconfig, tiny_tokenizer).arun_episode(
        scripted_engine(["x"]), ROWS[0]
    )
    assert traj["rewards"].tolist() == [0.25]
