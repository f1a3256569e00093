# SPDX-License-Identifier: Apache-2.0
"""AReaL's own workflow classes, imported from the real package, on the runtime.

Each runs through ``run_rollout``, the ``run_episode`` fixture and ``areal-devkit run``, on the
scripted engine and on the embedded default model, and its trajectories must pass AReaL's
``check_trajectory_format`` and ``concat_padded_tensors``. MathToolAgent drives the OpenAI
Agents SDK, which talks to the proxy's Responses API and runs AReaL's calculator tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from areal.api.cli_args import GenerationHyperparameters
from areal.infra.workflow_executor import check_trajectory_format
from areal.utils.data import concat_padded_tensors
from areal.workflow.multi_turn import MultiTurnWorkflow
from areal.workflow.openai.math_agent import MathAgent, MathToolAgent, MultiTurnMathAgent
from areal.workflow.rlvr import RLVRWorkflow
from areal.workflow.vision_rlvr import VisionRLVRWorkflow
from PIL import Image

from areal_runtime.infra.workflow_executor import run_rollout

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    {"messages": [{"role": "user", "content": f"What is {a}+{b}?"}], "answer": str(a + b)}
    for a, b in [(2, 3), (10, 7), (4, 4)]
]


def gsm8k(*args: Any, **kwargs: Any) -> float:
    from areal.reward.gsm8k import gsm8k_reward_fn

    return gsm8k_reward_fn(*args, **kwargs)


def assert_areal_accepts(trajectories: list[dict[str, Any]]) -> dict[str, Any]:
    """Every trajectory passes AReaL's format check and AReaL concatenates them."""
    assert trajectories
    for traj in trajectories:  # one row per model call (a retrying agent makes several)
        assert check_trajectory_format(traj, batch_size=traj["input_ids"].shape[0]) is True
    batch = concat_padded_tensors(trajectories)
    assert batch["input_ids"].shape[0] == sum(t["input_ids"].shape[0] for t in trajectories)
    return batch


def text_workflows(tokenizer: Any) -> dict[str, Any]:
    gconfig = GenerationHyperparameters(max_new_tokens=12, greedy=True)
    return {
        "rlvr": RLVRWorkflow(gsm8k, gconfig, tokenizer),
        "multi_turn": MultiTurnWorkflow(gsm8k, gconfig, tokenizer, max_turns=2, turn_discount=0.5),
    }


def split(batch: dict[str, Any]) -> list[dict[str, Any]]:
    """The executor's padded batch back into per-episode dicts, for AReaL's checks."""
    n = batch["input_ids"].shape[0]
    return [{k: v[i : i + 1] for k, v in batch.items()} for i in range(n)]


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["rlvr", "multi_turn"])
async def test_text_workflow_through_run_rollout_on_scripted_engine(
    name: str, scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    engine = scripted_engine(["The answer is 5", "so 17", "it is 9", "8"])
    result = await run_rollout(text_workflows(tiny_tokenizer)[name], ROWS, engine, concurrency=1)
    assert result.report.accepted == 3, result.report
    batch = assert_areal_accepts(split(result.batch))
    assert batch["rewards"].tolist()[:2] == [1.0, 1.0]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.parametrize("name", ["rlvr", "multi_turn"])
async def test_text_workflow_through_run_episode_on_local_engine(
    name: str, local_engine: Any, run_episode: Any
) -> None:
    workflow = text_workflows(local_engine.tokenizer)[name]
    trajectories = [await run_episode(workflow, row, engine=local_engine) for row in ROWS]
    batch = assert_areal_accepts(trajectories)
    assert (batch["loss_mask"].sum(dim=1) > 0).all()  # the model generated in every episode


class TinyVisionProcessor:
    """The slice of a Qwen-VL processor VisionRLVRWorkflow uses: token ids for the prompt with
    one image token per image, ``mm_token_type_ids`` and pixel values."""

    image_token = "<|image|>"

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, images: list[Any], text: str, padding: bool, return_tensors: str) -> dict:
        ids = self.tokenizer.encode(text)
        prefix = [self.tokenizer.pad_token_id] * len(images)  # stands in for image tokens
        return {
            "input_ids": torch.tensor([prefix + ids]),
            "mm_token_type_ids": torch.tensor([[1] * len(prefix) + [0] * len(ids)]),
            "pixel_values": torch.stack([torch.zeros(3, 4, 4) for _ in images]),
            "image_grid_thw": torch.tensor([[1, 2, 2]] * len(images)),
        }


def vision_rows() -> list[dict[str, Any]]:
    return [
        {
            "images": [Image.new("RGB", (4, 4), (i * 40, 0, 0))],
            "messages": row["messages"][0]["content"],
            "answer": row["answer"],
        }
        for i, row in enumerate(ROWS)
    ]


@pytest.mark.asyncio
async def test_vision_workflow_on_scripted_engine(
    scripted_engine: Any, tiny_tokenizer: Any, run_episode: Any
) -> None:
    workflow = VisionRLVRWorkflow(
        gsm8k,
        GenerationHyperparameters(max_new_tokens=8),
        tiny_tokenizer,
        TinyVisionProcessor(tiny_tokenizer),
        enable_thinking=False,
    )
    engine = scripted_engine(["5", "17", "9"])
    trajectories = [await run_episode(workflow, row, engine=engine) for row in vision_rows()]
    batch = assert_areal_accepts(trajectories)
    assert batch["rewards"].tolist() == [1.0, 1.0, 0.0]
    assert len(batch["multi_modal_input"]) == 3
    assert all(req.image_data and req.image_data[0].startswith("iVBOR") for req in engine.requests)
    result = await run_rollout(workflow, vision_rows(), scripted_engine(["5", "17", "8"]))
    assert result.report.accepted == 3


@pytest.mark.asyncio
@pytest.mark.parametrize("agent_cls", [MathAgent, MultiTurnMathAgent])
async def test_openai_agents_through_run_rollout_on_scripted_engine(
    agent_cls: type, scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    agent = agent_cls(max_completion_tokens=12)
    engine = scripted_engine(["5", "17", "it is 3", "8"])
    result = await run_rollout(agent, ROWS, engine, tokenizer=tiny_tokenizer, concurrency=1)
    assert result.report.accepted == 3, result.report
    batch = assert_areal_accepts(split(result.batch))
    assert batch["rewards"].tolist()[:2] == [1.0, 1.0]


@pytest.mark.asyncio
async def test_math_tool_agent_calls_a_tool_through_the_responses_api(
    scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    call = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    engine = scripted_engine([call, "5"])
    row = {"messages": [{"role": "user", "content": "What is 2+3?"}], "answer": "5"}
    result = await run_rollout(MathToolAgent(), [row], engine, tokenizer=tiny_tokenizer)
    assert result.report.accepted == 1, result.episodes[0].error
    first, second = engine.requests
    assert '"name": "add"' in tiny_tokenizer.decode(first.input_ids)  # AReaL's tools, rendered
    assert "<|im_start|>tool\n5.0<|im_end|>" in tiny_tokenizer.decode(second.input_ids)
    batch = assert_areal_accepts(split(result.batch))
    assert batch["rewards"].tolist() == [1.0, 1.0]  # the answer's reward, returned to the call


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.parametrize("agent_cls", [MathAgent, MultiTurnMathAgent])
async def test_openai_agents_through_run_episode_on_local_engine(
    agent_cls: type, local_engine: Any, run_episode: Any
) -> None:
    agent = agent_cls(max_completion_tokens=12)
    trajectories = [
        await run_episode(agent, row, engine=local_engine, tokenizer=local_engine.tokenizer)
        for row in ROWS
    ]
    assert_areal_accepts(trajectories)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workflow", "kwargs"),
    [
        ("areal.workflow.rlvr:RLVRWorkflow", {"reward_fn": "areal.reward.gsm8k.gsm8k_reward_fn"}),
        (
            "areal.workflow.multi_turn:MultiTurnWorkflow",
            {
                "reward_fn": "areal.reward.gsm8k.gsm8k_reward_fn",
                "max_turns": 2,
                "turn_discount": 0.5,
            },
        ),
        ("areal.workflow.openai.math_agent:MathAgent", {"max_completion_tokens": 12}),
        ("areal.workflow.openai.math_agent:MultiTurnMathAgent", {"max_completion_tokens": 12}),
        ("areal.workflow.openai.math_agent:MathToolAgent", {}),
    ],
)
@pytest.mark.parametrize("engine", ["scripted", "local"])
def test_areal_devkit_run_takes_areals_classes(
    workflow: str, kwargs: dict, engine: str, tmp_path: Path, devkit_main
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "traj.pt"
    args = ["run", workflow, "--engine", engine, "--data", str(data)]
    args += ["--kwargs", json.dumps(kwargs), "--output", str(out)]
    # One at a time: the scripted engine replays answers in request order, and concurrent
    # agents reach the proxy in any order.
    args += ["--concurrency", "1"]
    # In this process (the console script's path stays covered in the main suite): a
    # subprocess spent about 7 of its 9 s of CPU importing AReaL, torch and transformers.
    proc = devkit_main(*args, cwd=ROOT)
    # MathToolAgent's six tool schemas make a ~1,700-token prompt: the embedded model's 64k
    # positions hold it, so it is answered like the others. Every episode is accepted: a call
    # of a tool the agent does not have (the model used to invent `divumide` on AReaL's own
    # wording of the calculator) makes the Agents SDK raise and `run` exit 1.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    batch = torch.load(out)
    assert_areal_accepts(split(batch))
    if engine == "scripted":  # the scripted engine replays each row's answer
        assert batch["rewards"].tolist() == [1.0, 1.0, 1.0]
