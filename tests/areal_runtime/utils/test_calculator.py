# SPDX-License-Identifier: Apache-2.0
"""The calculator table: one arithmetic, each SDK's spelling, the same tools in every agent."""

import asyncio
import inspect

import pytest

from areal_runtime.utils.calculator import CALCULATOR, plain_function, spelled


def test_every_tool_computes_and_refuses_once():
    tools = {t.name: t for t in CALCULATOR}
    assert list(tools) == ["add", "subtract", "multiply", "divide", "power", "sqrt"]
    assert [tools[n](6, 3) for n in ("add", "subtract", "multiply", "divide", "power")] == [
        9,
        3,
        18,
        2.0,
        216,
    ]
    assert tools["sqrt"](9.0) == 3.0
    with pytest.raises(ValueError, match="Division by zero"):
        tools["divide"](1, 0)
    with pytest.raises(ValueError, match="square root of a negative"):
        tools["sqrt"](-1)


def test_a_plain_function_carries_its_spelling():
    power = next(t for t in CALCULATOR if t.name == "power")
    function = plain_function(power, "langchain", "somewhere")
    assert function.__name__ == "power" and function.__module__ == "somewhere"
    assert function.__doc__ == "Raise base to the power exponent."
    assert list(inspect.signature(function).parameters) == ["base", "exponent"]
    assert function(2, exponent=3) == 8
    with pytest.raises(TypeError):
        function(a=2, b=3)  # the Agents SDK spelling is not this one
    assert [name for name, _, _ in spelled("claude_code")] == [t.name for t in CALCULATOR]


def test_the_three_agents_offer_the_tables_tools():
    pytest.importorskip("agents")
    pytest.importorskip("langchain")
    pytest.importorskip("claude_agent_sdk")
    from areal_runtime.workflow.anthropic import claude_math_agent
    from areal_runtime.workflow.langchain import math_agent as langchain_agent
    from areal_runtime.workflow.openai import math_agent as openai_agent

    for name, description, params in spelled("agents_sdk"):
        tool = getattr(openai_agent, name)
        assert tool.description == description
        assert list(tool.params_json_schema["properties"]) == list(params)
    for name, description, params in spelled("langchain"):
        tool = getattr(langchain_agent, name)
        assert tool.description == description and list(tool.args) == list(params)
    assert langchain_agent.divide.invoke({"a": 1, "b": 4}) == 0.25
    for name, description, params in spelled("claude_code"):
        tool = getattr(claude_math_agent, name)
        assert tool.description == description and list(tool.input_schema) == list(params)
    refused = asyncio.run(claude_math_agent.sqrt.handler({"n": -4.0}))
    assert refused["is_error"] and "negative" in refused["content"][0]["text"]
    assert asyncio.run(claude_math_agent.power.handler({"base": 2, "exponent": 3})) == {
        "content": [{"type": "text", "text": "8"}]
    }
