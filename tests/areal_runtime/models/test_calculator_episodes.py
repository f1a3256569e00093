# SPDX-License-Identifier: Apache-2.0
"""Calculator agents spelled fresh: the call names the tool that does the question's operation."""

import random
import re

from areal_runtime.models.calculator_episodes import OPERATIONS, calculator_episode
from areal_runtime.models.schema_episodes import EVAL_WORDS
from areal_runtime.models.tool_episodes import ARG_NAMES, SUM_NAMES
from areal_runtime.utils.calculator import CALCULATOR

COMPUTE = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}


def _tool(episode, name):
    (tool,) = [t["function"] for t in episode.tools if t["function"]["name"] == name]
    return tool


def test_the_call_is_the_operators_tool_with_the_questions_operands_and_the_result_follows():
    rng = random.Random(0)
    computed = {t.name: t.compute for t in CALCULATOR}
    seen_ops = set()
    for _ in range(400):
        episode = calculator_episode(rng)
        question = episode.messages[-1]["content"]
        a, symbol, b = re.fullmatch(r"What is (\d+)([-+*/])(\d+)\?", question).groups()
        seen_ops.add(symbol)
        (op,) = [op for op in OPERATIONS if op.symbol == symbol]
        assert episode.call["name"] in op.names
        tool = _tool(episode, episode.call["name"])
        assert list(episode.call["arguments"]) == list(tool["parameters"]["properties"])
        assert list(episode.call["arguments"].values()) == [int(a), int(b)]
        value = computed[COMPUTE[symbol]](int(a), int(b))
        assert float(episode.result) == value and float(episode.answer) == value
        # One tool per operation, so the asked one is never ambiguous.
        names = [t["function"]["name"] for t in episode.tools]
        assert len(names) == len(set(names))
    assert seen_ops == set(COMPUTE)


def test_tool_lists_vary_in_size_order_wording_and_system_prompt():
    rng = random.Random(1)
    episodes = [calculator_episode(rng) for _ in range(300)]
    sizes = {
        len([t for t in e.tools if "transfer_to" not in t["function"]["name"]]) for e in episodes
    }
    assert sizes == set(range(2, len(OPERATIONS) + 1))
    first_tools = {e.tools[0]["function"]["name"] for e in episodes}
    assert len(first_tools) > 10  # not always the sum tool first
    add_descriptions = {
        _tool(e, e.call["name"]).get("description", "")
        for e in episodes
        if "+" in e.messages[-1]["content"]
    }
    assert len(add_descriptions) >= 6
    systems = {e.messages[0]["content"] for e in episodes if e.messages[0]["role"] == "system"}
    assert len(systems) > 50


def test_no_held_out_evaluation_name_is_drawn():
    """The held-out measures (sum tools, argument pairs, the schema evaluation's words) stay
    unseen by the calculator rows."""
    held_out = set(SUM_NAMES["held_out"]) | {a for pair in ARG_NAMES["held_out"] for a in pair}
    held_out |= set(EVAL_WORDS)
    rng = random.Random(2)
    for _ in range(1000):
        episode = calculator_episode(rng)
        for tool in episode.tools:
            fn = tool["function"]
            assert not ({fn["name"], *fn["parameters"]["properties"]} & held_out), fn
            words = re.findall(r"[a-z]+", fn.get("description", "").lower())
            assert not set(words) & set(EVAL_WORDS), fn
