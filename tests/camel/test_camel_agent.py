# SPDX-License-Identifier: Apache-2.0
"""CAMEL-AI's ``ChatAgent`` driving the proxy through ``areal_runtime.experimental.camel``.

Runs in ``.venv-camel`` only (camel-ai pins pydantic 2.12.0; tests/conftest.py does not
collect this folder elsewhere). Both of AReaL's shapes complete episodes on the scripted engine
and on the embedded model, in-process and through ``areal-devkit run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import camel  # noqa: F401  (fail loudly, not skip, when camel-ai is missing)
import pytest

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.infra.workflow_executor import run_rollout
from areal_runtime.utils.data import validate_trajectory
from examples.camel_math import CamelMathAgent, CamelRLVRWorkflow

ROOT = Path(__file__).resolve().parents[2]
ROWS = [
    {"messages": [{"role": "user", "content": f"What is {a}+{b}?"}], "answer": str(a + b)}
    for a, b in [(2, 3), (10, 7), (4, 4)]
]


def split(batch: dict[str, Any]) -> list[dict[str, Any]]:
    n = batch["input_ids"].shape[0]
    return [{k: v[i : i + 1] for k, v in batch.items()} for i in range(n)]


@pytest.mark.asyncio
@pytest.mark.parametrize("shape", ["workflow", "agent"])
async def test_camel_chat_agent_completes_episodes_on_the_scripted_engine(
    shape: str, scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    engine = scripted_engine(["The answer is 5", "17", "it is 9"])
    if shape == "workflow":
        workflow: Any = CamelRLVRWorkflow(
            GenerationHyperparameters(max_new_tokens=16), tiny_tokenizer
        )
    else:
        workflow = CamelMathAgent(tiny_tokenizer, max_tokens=16)
    result = await run_rollout(workflow, ROWS, engine, tokenizer=tiny_tokenizer, concurrency=1)
    assert result.report.accepted == 3, [e.error for e in result.episodes]
    assert result.batch["rewards"].tolist() == [1.0, 1.0, 0.0]
    for traj in split(result.batch):
        validate_trajectory(traj, batch_size=1)  # raises on any contract violation
    prompt = tiny_tokenizer.decode(engine.requests[0].input_ids)
    assert prompt == "<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n"
    assert engine.requests[0].gconfig.max_new_tokens == 16  # CAMEL's model_config_dict


@pytest.mark.asyncio
@pytest.mark.slow
async def test_camel_workflow_completes_episodes_on_the_embedded_model(
    local_engine: Any, inline_rewards: None
) -> None:
    workflow = CamelRLVRWorkflow(
        GenerationHyperparameters(max_new_tokens=8, greedy=True), local_engine.tokenizer
    )
    result = await run_rollout(workflow, ROWS, local_engine, tokenizer=local_engine.tokenizer)
    assert result.report.accepted == 3, [e.error for e in result.episodes]
    assert (result.batch["loss_mask"].sum(dim=1) > 0).all()  # the model answered each


@pytest.mark.slow
def test_areal_devkit_run_runs_the_camel_agent_on_the_embedded_model(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "traj.jsonl"
    cmd = [sys.executable, "-m", "areal_devkit", "run", "examples.camel_math:CamelMathAgent"]
    cmd += ["--data", str(data), "--output", str(out), "--concurrency", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    episodes = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["accepted"] for e in episodes] == [True] * 3, proc.stdout
    assert all(sum(e["loss_mask"][0]) > 0 for e in episodes)  # the model answered each


def test_backend_counts_tokens_with_the_engines_tokenizer(tiny_tokenizer: Any) -> None:
    from areal_runtime.experimental.camel.openai_model import (
        AReaLOpenAICompatibleModel,
        AReaLTokenCounter,
    )

    model = AReaLOpenAICompatibleModel("areal", openai_client=None, tokenizer=tiny_tokenizer)
    counter = model.token_counter  # no tiktoken download: the engine's own tokenizer
    assert isinstance(counter, AReaLTokenCounter)
    messages = [{"role": "user", "content": "What is 2+3?"}]
    expected = (
        3
        + counter.tokens_per_message
        + sum(len(tiny_tokenizer.encode(v)) for v in ("user", "What is 2+3?"))
    )
    assert counter.count_tokens_from_messages(messages) == expected
    assert counter.decode(counter.encode("What is 2+3?")) == "What is 2+3?"
    with pytest.raises(ValueError, match="text parts only"):
        counter.count_tokens_from_messages([{"role": "user", "content": [{"type": "image_url"}]}])
    with pytest.raises(NotImplementedError, match="astep"):
        model._run(messages)


def add(a: float, b: float) -> float:
    r"""Add two numbers.

    Args:
        a (float): The first number.
        b (float): The second number.

    Returns:
        float: The sum.
    """
    return a + b


@pytest.mark.asyncio
async def test_camel_function_tools_run_through_the_proxy(tiny_tokenizer: Any) -> None:
    from camel.agents import ChatAgent
    from camel.toolkits import FunctionTool

    from areal_runtime.engine.scripted import ScriptedEngine
    from areal_runtime.experimental.camel.openai_model import AReaLOpenAICompatibleModel
    from areal_runtime.experimental.openai import ArealOpenAI

    call = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    engine = ScriptedEngine([call, "The sum is 5"], tokenizer=tiny_tokenizer)
    client = ArealOpenAI(engine=engine, tokenizer=tiny_tokenizer)
    model = AReaLOpenAICompatibleModel(
        "areal",
        openai_client=client,
        tokenizer=tiny_tokenizer,
        model_config_dict={"max_tokens": 64},
    )
    agent = ChatAgent(model=model, tools=[FunctionTool(add)])
    response = await agent.astep("What is 2+3?")
    assert response.msg.content == "The sum is 5"
    first, second = (tiny_tokenizer.decode(r.input_ids) for r in engine.requests)
    assert '"name": "add"' in first  # CAMEL's tool schema, rendered into the prompt
    assert "<|im_start|>tool\n5<|im_end|>" in second  # CAMEL ran the tool; its result came back
    client.set_last_reward(1.0)
    client.apply_reward_discount(turn_discount=1.0)
    exported = client.export_interactions(style="individual")
    assert [item.reward for item in exported.values()] == [1.0, 1.0]
