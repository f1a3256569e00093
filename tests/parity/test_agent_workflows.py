# SPDX-License-Identifier: Apache-2.0
"""``areal_runtime.workflow.{openai,openai_agent,anthropic,langchain}`` against AReaL's own.

Public names and constructor / ``run`` signatures must be AReaL's; on one scripted engine, the
single-turn agents of both packages must produce the same trajectories tensor by tensor, and
the multi-turn and tool agents the same requests' structure (tools, tool results, turns) and
rewards. Prompt wording is deliberately our own (a row in docs/runtime.md).
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from areal_runtime.infra.workflow_executor import run_rollout

from .test_signatures import shape

AGENT_MODULES = {
    "workflow.openai.math_agent": ["MathAgent", "MultiTurnMathAgent", "MathToolAgent"],
    "workflow.openai_agent.math_agent": ["build_math_agent"],
    "workflow.anthropic.math_agent": ["MathAgent"],
    "workflow.langchain.math_agent": ["MathAgent", "MathToolAgent"],
}
ROWS = [
    {"messages": [{"role": "user", "content": f"What is {a}+{b}?"}], "answer": str(a + b)}
    for a, b in [(2, 3), (10, 7), (4, 4)]
]


def agent_module(pkg: str, name: str) -> types.ModuleType:
    """``{pkg}.{name}``; AReaL's ``areal.workflow.anthropic`` package also imports its Claude
    Code agent (``claude_agent_sdk``, not installed here), so its ``math_agent`` is then loaded
    under its own name without the package's ``__init__``."""
    try:
        return importlib.import_module(f"{pkg}.{name}")
    except ModuleNotFoundError as exc:
        if pkg != "areal" or exc.name != "claude_agent_sdk":
            raise
    parent = f"areal.{name.rsplit('.', 1)[0]}"
    package = types.ModuleType(parent)
    package.__path__ = [
        str(Path(importlib.import_module("areal.workflow").__file__).parent / "anthropic")
    ]
    sys.modules[parent] = package
    return importlib.import_module(f"{pkg}.{name}")


def public_names(module: types.ModuleType) -> set[str]:
    """Names a user imports from the module: defined there (or tools), not SDK re-imports."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        home = getattr(value, "__module__", module.__name__)
        if home == module.__name__ or not callable(value) or hasattr(value, "params_json_schema"):
            names.add(name)
    return names


@pytest.mark.parametrize("name", sorted(AGENT_MODULES))
def test_agent_module_has_areals_public_names(name: str) -> None:
    areal, runtime = agent_module("areal", name), agent_module("areal_runtime", name)
    tools = {"add", "subtract", "multiply", "divide", "power", "sqrt", "CALCULATOR_TOOLS"}
    wanted = {n for n in public_names(areal) if n not in {"logger"}} - {"math_reward_fn"}
    missing = wanted - set(dir(runtime)) - (tools if name.endswith("openai_agent") else set())
    assert not missing, f"areal_runtime.{name} lacks {sorted(missing)}"
    if hasattr(areal, "math_reward_fn"):
        assert callable(runtime.math_reward_fn)


@pytest.mark.parametrize(
    ("name", "attr"),
    [(m, a) for m, attrs in AGENT_MODULES.items() for a in attrs],
    ids=lambda v: v,
)
def test_agent_constructor_and_run_signatures_are_areals(name: str, attr: str) -> None:
    areal = getattr(agent_module("areal", name), attr)
    runtime = getattr(agent_module("areal_runtime", name), attr)
    assert shape(runtime) == shape(areal)
    if inspect.isclass(areal):
        assert shape(runtime.run) == shape(areal.run)
        assert inspect.iscoroutinefunction(runtime.run)


@pytest.mark.parametrize("name", ["workflow.openai.math_agent", "workflow.langchain.math_agent"])
def test_calculator_tools_have_areals_names_and_parameters(name: str) -> None:
    def schemas(pkg: str) -> dict[str, Any]:
        module = agent_module(pkg, name)
        tools = [
            getattr(module, t) for t in ("add", "subtract", "multiply", "divide", "power", "sqrt")
        ]
        if name.startswith("workflow.openai"):
            return {t.name: t.params_json_schema for t in tools}
        return {t.name: t.args for t in tools}

    assert schemas("areal_runtime") == schemas("areal")


@pytest.mark.parametrize(
    ("pkg_name", "kwargs"),
    [
        ("workflow.openai.math_agent", {"max_completion_tokens": 12, "max_turns": 3}),
        ("workflow.anthropic.math_agent", {"max_tokens": 12, "max_completion_tokens": 9}),
        ("workflow.langchain.math_agent", {"max_completion_tokens": 12, "temperature": 0.0}),
    ],
)
def test_agents_drop_and_keep_the_same_constructor_keywords(pkg_name: str, kwargs: dict) -> None:
    areal = agent_module("areal", pkg_name).MathAgent(**kwargs)
    runtime = agent_module("areal_runtime", pkg_name).MathAgent(**kwargs)
    assert runtime.kwargs == areal.kwargs


async def rollout(agent: Any, engine: Any, tokenizer: Any, rows: list[dict]) -> Any:
    result = await run_rollout(agent, rows, engine, tokenizer=tokenizer, concurrency=1)
    assert result.report.accepted == len(rows), [e.error for e in result.episodes]
    return result


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("workflow.openai.math_agent", {"max_completion_tokens": 12}),
        ("workflow.anthropic.math_agent", {"max_tokens": 12}),
        ("workflow.langchain.math_agent", {"max_completion_tokens": 12}),
    ],
)
async def test_single_turn_agents_produce_areals_trajectories(
    name: str, kwargs: dict, scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    script = ["The answer is 5", "17", "it is 9"]
    batches, prompts = [], []
    for pkg in ("areal", "areal_runtime"):
        engine = scripted_engine(script)
        agent = agent_module(pkg, name).MathAgent(**kwargs)
        batches.append((await rollout(agent, engine, tiny_tokenizer, ROWS)).batch)
        prompts.append([(r.input_ids, r.gconfig.max_new_tokens) for r in engine.requests])
    areal, runtime = batches
    assert prompts[0] == prompts[1]
    assert sorted(areal) == sorted(runtime)
    for key in areal:
        assert torch.equal(areal[key], runtime[key]), key
    assert runtime["rewards"].tolist() == [1.0, 1.0, 0.0]


@pytest.mark.asyncio
async def test_multi_turn_agent_takes_areals_turns_and_rewards(
    scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    outcomes = []
    for pkg in ("areal", "areal_runtime"):
        engine = scripted_engine(["it is 6", "it is 4", "5", "17"])
        agent = agent_module(pkg, "workflow.openai.math_agent").MultiTurnMathAgent(
            max_turns=3, max_completion_tokens=12
        )
        result = await rollout(agent, engine, tiny_tokenizer, ROWS[:2])
        first_prompt = engine.requests[0].input_ids
        roles = [tiny_tokenizer.decode(r.input_ids).count("<|im_start|>") for r in engine.requests]
        outcomes.append((first_prompt, roles, result.batch["rewards"].tolist()))
    assert outcomes[0] == outcomes[1]
    # user + generation prompt; then +answer, +feedback each retry; then the next row
    assert outcomes[1][1] == [2, 4, 6, 2]


def tool_call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("workflow.openai.math_agent", tool_call("multiply", a=6, b=7)),
        ("workflow.langchain.math_agent", tool_call("multiply", a=6, b=7)),
    ],
)
async def test_tool_agents_call_areals_tools_and_score_alike(
    name: str, call: str, scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    row = {"messages": [{"role": "user", "content": "What is 6*7?"}], "answer": "42"}
    outcomes = []
    for pkg in ("areal", "areal_runtime"):
        engine = scripted_engine([call, "The product is 42"])
        result = await rollout(
            agent_module(pkg, name).MathToolAgent(), engine, tiny_tokenizer, [row]
        )
        second = tiny_tokenizer.decode(engine.requests[-1].input_ids)
        tool_result = second.split("<|im_start|>tool\n", 1)[1].split("<|im_end|>", 1)[0]
        outcomes.append((len(engine.requests), tool_result, result.batch["rewards"].tolist()))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1] == (2, "42.0", [1.0, 1.0])


def test_deliberate_agent_prompts_are_worded_anew() -> None:
    """AReaL's instructions, retry feedback and tool descriptions are not copied: the runtime's
    say the same thing in their own words (same tools, names and parameters, tested above)."""
    prompts = ("INSTRUCTIONS", "FEEDBACK", "PROMPT")
    for name in (
        "workflow.openai.math_agent",
        "workflow.openai_agent.math_agent",
        "workflow.langchain.math_agent",
    ):
        areal_src = inspect.getsource(agent_module("areal", name))
        runtime = agent_module("areal_runtime", name)
        ours = [v for k, v in vars(runtime).items() if k.endswith(prompts) and isinstance(v, str)]
        assert ours, name
        assert all(text not in areal_src for text in ours), name


def test_deliberate_anthropic_math_agent_without_max_tokens_is_refused_at_construction() -> None:
    """AReaL's builds and then fails inside the SDK in every episode; ours says so at once."""
    name = "workflow.anthropic.math_agent"
    agent_module("areal", name).MathAgent(temperature=1.0)  # no error until the first episode
    with pytest.raises(TypeError, match="MathAgent needs max_tokens"):
        agent_module("areal_runtime", name).MathAgent(temperature=1.0)
