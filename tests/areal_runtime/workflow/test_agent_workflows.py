# SPDX-License-Identifier: Apache-2.0
"""AReaL's agent workflows at AReaL's paths (``areal_runtime.workflow.{openai,openai_agent,
anthropic,langchain}``), driven through the proxy by their real SDKs on the scripted engine.

Each test checks what the engine was asked (the SDK's request, rendered) and what came back
(rewards per completion), so a broken mirror or proxy shows up as a wrong prompt or reward.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from areal_runtime.infra.workflow_executor import run_rollout

ROWS = [
    {"messages": [{"role": "user", "content": f"What is {a}+{b}?"}], "answer": str(a + b)}
    for a, b in [(2, 3), (10, 7)]
]


def rewards(result: Any) -> list[float]:
    return result.batch["rewards"].tolist()


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "module", ["openai.math_agent", "anthropic.math_agent", "langchain.math_agent"]
)
async def test_single_turn_math_agents_score_each_answer(
    module: str, scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    import importlib

    agent_cls = importlib.import_module(f"areal_runtime.workflow.{module}").MathAgent
    kwargs = {"max_tokens": 12} if module.startswith("anthropic") else {}
    engine = scripted_engine(["The answer is 5", "it is 18"])
    result = await run_rollout(
        agent_cls(max_completion_tokens=12, **kwargs),
        ROWS,
        engine,
        tokenizer=tiny_tokenizer,
        concurrency=1,
    )
    assert result.report.accepted == 2, [e.error for e in result.episodes]
    assert rewards(result) == [1.0, 0.0]
    first = tiny_tokenizer.decode(engine.requests[0].input_ids)
    assert "What is 2+3?" in first
    assert engine.requests[0].gconfig.max_new_tokens == 12


@pytest.mark.asyncio
async def test_anthropic_math_agent_sends_a_system_message_as_the_system_parameter(
    scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    from areal_runtime.workflow.anthropic.math_agent import MathAgent

    row = {
        "messages": [
            {"role": "system", "content": "Answer with a number."},
            {"role": "user", "content": "What is 2+3?"},
        ],
        "answer": "5",
    }
    engine = scripted_engine(["5"])
    result = await run_rollout(MathAgent(max_tokens=8), [row], engine, tokenizer=tiny_tokenizer)
    assert result.report.accepted == 1, result.episodes[0].error
    prompt = tiny_tokenizer.decode(engine.requests[0].input_ids)
    assert prompt.startswith("<|im_start|>system\nAnswer with a number.<|im_end|>")


@pytest.mark.asyncio
async def test_multi_turn_math_agent_retries_with_feedback_until_correct(
    scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    from areal_runtime.experimental.openai.proxy import AgentProxy
    from areal_runtime.workflow.openai.math_agent import RETRY_FEEDBACK, MultiTurnMathAgent

    engine = scripted_engine(["it is 6", "it is 4", "5"])
    agent = MultiTurnMathAgent(max_turns=3, max_completion_tokens=8, max_tokens=99)
    assert agent.kwargs == {"max_completion_tokens": 8}  # max_tokens dropped, as AReaL does
    async with AgentProxy(engine, tiny_tokenizer) as proxy, proxy.session() as session:
        per_turn = await agent.run(ROWS[0], **session.extra_kwargs)
        assert list(per_turn) == session.completion_ids  # keyed by the proxy's completion ids
    assert list(per_turn.values()) == [0.0, 0.0, 1.0]
    assert len(engine.requests) == 3
    last = tiny_tokenizer.decode(engine.requests[2].input_ids)
    assert last.count(RETRY_FEEDBACK) == 2 and "it is 4" in last
    result = await run_rollout(
        agent, ROWS[:1], scripted_engine(["6", "5"]), tokenizer=tiny_tokenizer
    )
    assert result.report.accepted == 1, result.episodes[0].error
    assert rewards(result) == [1.0, 1.0]  # AReaL's default turn discount 1.0 carries it back


@pytest.mark.asyncio
async def test_multi_turn_math_agent_stops_at_max_turns(
    scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    from areal_runtime.workflow.openai.math_agent import MultiTurnMathAgent

    engine = scripted_engine(["no"], cycle=True)
    result = await run_rollout(
        MultiTurnMathAgent(max_turns=2), ROWS[:1], engine, tokenizer=tiny_tokenizer
    )
    assert len(engine.requests) == 2
    assert rewards(result) == [0.0, 0.0]


@pytest.mark.asyncio
async def test_openai_math_tool_agent_runs_the_calculator_through_the_agents_sdk(
    scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    from areal_runtime.workflow.openai.math_agent import MathToolAgent

    engine = scripted_engine([call("multiply", a=6, b=7), "The product is 42"])
    row = {"messages": [{"role": "user", "content": "What is 6*7?"}], "answer": "42"}
    result = await run_rollout(MathToolAgent(), [row], engine, tokenizer=tiny_tokenizer)
    assert result.report.accepted == 1, result.episodes[0].error
    first, second = (tiny_tokenizer.decode(r.input_ids) for r in engine.requests)
    for name in ("add", "subtract", "multiply", "divide", "power", "sqrt"):
        assert f'"name": "{name}"' in first
    assert "<|im_start|>tool\n42.0<|im_end|>" in second  # the tool really ran
    assert rewards(result) == [1.0, 1.0]


@pytest.mark.asyncio
async def test_langchain_math_tool_agent_runs_the_calculator_through_create_agent(
    scripted_engine: Any, tiny_tokenizer: Any, inline_rewards: None
) -> None:
    from areal_runtime.workflow.langchain.math_agent import MathToolAgent

    engine = scripted_engine([call("power", base=2, exponent=5), "2^5 = 32"])
    row = {"messages": [{"role": "user", "content": "What is 2^5?"}], "answer": "32"}
    result = await run_rollout(
        MathToolAgent(temperature=0.0, max_completion_tokens=64),
        [row],
        engine,
        tokenizer=tiny_tokenizer,
    )
    assert result.report.accepted == 1, result.episodes[0].error
    first, second = (tiny_tokenizer.decode(r.input_ids) for r in engine.requests)
    assert '"name": "sqrt"' in first and "You are a math assistant" in first
    assert "<|im_start|>tool\n32.0<|im_end|>" in second
    assert engine.requests[0].gconfig.max_new_tokens == 64
    assert rewards(result)[-1] == 1.0


@pytest.mark.asyncio
async def test_openai_agent_handoff_coordinator_hands_off_to_a_specialist(
    scripted_engine: Any, tiny_tokenizer: Any
) -> None:
    from agents import OpenAIProvider, RunConfig, Runner
    from openai import AsyncOpenAI

    from areal_runtime.experimental.openai.proxy import AgentProxy
    from areal_runtime.workflow.openai_agent.math_agent import build_math_agent

    agent = build_math_agent()
    assert [h.tool_name for h in agent.handoffs] == [
        "analyze_problem",
        "solve_problem",
        "refine_solution",
        "verify_solution",
    ]
    engine = scripted_engine([call("verify_solution"), "Verified: 5"])
    async with AgentProxy(engine, tiny_tokenizer) as proxy, proxy.session() as session:
        kw = session.extra_kwargs
        client = AsyncOpenAI(
            base_url=kw["base_url"], api_key=kw["api_key"], http_client=kw["http_client"]
        )
        config = RunConfig(
            model_provider=OpenAIProvider(openai_client=client),
            model="default",  # as AReaL's agents do; the SDK's own default adds `reasoning`
            tracing_disabled=True,
        )
        result = await Runner.run(agent, input="What is 2+3?", run_config=config)
    assert result.final_output == "Verified: 5"
    assert result.last_agent.name == "Verification Agent"
    assert "Verification Agent" in tiny_tokenizer.decode(engine.requests[1].input_ids)


CLI_CASES = [
    ("openai.math_agent:MathAgent", {"max_completion_tokens": 12}, "local"),
    (
        "openai.math_agent:MultiTurnMathAgent",
        {"max_completion_tokens": 12, "max_turns": 2},
        "local",
    ),
    ("anthropic.math_agent:MathAgent", {"max_tokens": 12}, "local"),
    ("langchain.math_agent:MathAgent", {"max_completion_tokens": 12}, "local"),
    # Six tool schemas make prompts longer than the embedded model's 512 positions: scripted.
    ("openai.math_agent:MathToolAgent", {}, "scripted"),
    ("langchain.math_agent:MathToolAgent", {"max_completion_tokens": 64}, "scripted"),
    # Worker processes: the agent (and the reward wrapper it holds) goes there by pickle.
    ("openai.math_agent:MathAgent", {"max_completion_tokens": 12}, "local --agent-mode subproc"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("workflow", "kwargs", "engine"), CLI_CASES, ids=lambda v: str(v))
def test_areal_devkit_run_runs_each_agent_at_areals_path(
    workflow: str, kwargs: dict, engine: str, tmp_path: Any, devkit_main: Any
) -> None:
    """In this process (``devkit_main``: the SDKs and the model load once per worker), except
    the worker-process case, whose agent crosses a process boundary: a real subprocess."""
    import subprocess
    import sys
    from pathlib import Path

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "traj.jsonl"
    args = ["run", f"areal_runtime.workflow.{workflow}"]
    args += ["--engine", *engine.split(), "--data", str(data), "--kwargs", json.dumps(kwargs)]
    args += ["--output", str(out), "--concurrency", "1"]
    root = Path(__file__).resolve().parents[3]
    if "--agent-mode" in args:
        cmd = [sys.executable, "-m", "areal_devkit", *args]
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    else:
        proc = devkit_main(*args, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    episodes = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["accepted"] for e in episodes] == [True, True], proc.stdout
    assert all(sum(e["loss_mask"][0]) > 0 for e in episodes)  # the model answered each
    if engine == "scripted":  # the scripted engine answers with each row's answer
        assert [e["reward"] for e in episodes] == [1.0, 1.0]


@pytest.mark.parametrize(
    ("module", "sdk"),
    [
        ("openai.math_agent", "agents"),
        ("openai_agent.math_agent", "agents"),
        ("anthropic.math_agent", "anthropic"),
        ("langchain.math_agent", "langchain_openai"),
    ],
)
def test_a_missing_agent_sdk_names_the_extra_to_install(module: str, sdk: str) -> None:
    import subprocess
    import sys

    code = f"import sys; sys.modules[{sdk!r}] = None\nimport areal_runtime.workflow.{module}\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"needs the {sdk!r} package" in proc.stderr
    assert "pip install 'areal-devkit[agents]'" in proc.stderr


def test_anthropic_math_agent_without_max_tokens_names_the_fix() -> None:
    from areal_runtime.workflow.anthropic.math_agent import MathAgent

    with pytest.raises(TypeError, match=r"needs max_tokens .* MathAgent\(max_tokens=512\)"):
        MathAgent(max_completion_tokens=12)  # AReaL's example passes both; this one is dropped
