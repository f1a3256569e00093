# SPDX-License-Identifier: Apache-2.0
"""Calculator agents as users write them: the right tool read from its name and description.

The bundled ``calculator`` shape spells the six tools one way. A calculator agent written by
someone else words the same tools its own way ("Divide two numbers." beside "Add two numbers.",
its own system prompt), and on AReaL's own ``MathToolAgent`` the model trained on one spelling
called ``divumb``, ``divumide`` and ``culatstart`` (tools that do not exist, which the Agents
SDK rejects). These episodes draw every part of a calculator agent fresh: which operations it
offers and in what order, each tool's name, description and argument names from pools of
common spellings, the system prompt from a grammar, and the question's operator (+, -, *, /),
so the tool is chosen by what its name and description say, and its name is copied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from areal_runtime.models.default_model import MAX_OPERAND
from areal_runtime.models.tool_episodes import (
    AGENT_NAMES,
    CLIENTS,
    ToolEpisode,
    chat_tool,
    handoff_tool,
)
from areal_runtime.utils.calculator import CALCULATOR


@dataclass(frozen=True)
class Operation:
    """One calculator operation and the ways people spell its tool."""

    symbol: str | None  # the question's operator; None: never asked (a distractor only)
    names: tuple[str, ...]
    verb: str  # "Add", as in "Add two numbers."
    noun: str  # "sum", as in "Return the sum of a and b."
    args: tuple[tuple[str, ...], ...]


_PAIRS = (("a", "b"), ("x", "y"), ("num1", "num2"), ("first", "second"), ("n1", "n2"))
OPERATIONS = (
    Operation("+", ("add", "plus", "sum", "add_numbers", "addition"), "Add", "sum", _PAIRS),
    Operation(
        "-", ("subtract", "minus", "sub", "subtract_numbers", "difference"), "Subtract",
        "difference", _PAIRS,
    ),
    # Not "product": it is one of the held-out evaluation's words (schema_episodes.EVAL_WORDS).
    Operation(
        "*", ("multiply", "times", "mul", "multiply_numbers"), "Multiply", "multiplication",
        _PAIRS,
    ),
    Operation("/", ("divide", "div", "quotient", "divide_numbers"), "Divide", "quotient", _PAIRS),
    Operation(
        None, ("power", "pow", "exponent"), "Raise", "power",
        (("a", "b"), ("base", "exponent"), ("x", "y")),
    ),
    Operation(None, ("sqrt", "square_root", "root"), "Take", "square root", (("a",), ("n",), ("x",))),
    Operation(None, ("mod", "modulo", "remainder"), "Divide", "remainder", _PAIRS),
)  # fmt: skip
DESCRIPTIONS = {  # the default wording per operation; the others come from the templates
    "power": ["Raise {0} to the power {1}.", "Raise {0} to the power of {1}.", "{0} to the {1}."],
    "square root": [
        "The square root of {0}.", "Calculate the square root of a number.",
        "Square root of a non-negative number", "Take the square root of {0}.",
    ],
    "remainder": ["The remainder of {0} divided by {1}.", "Return {0} modulo {1}."],
}  # fmt: skip
TWO_ARG_TEMPLATES = [
    "{verb} two numbers.", "{verb} two numbers", "{verb} {0} and {1}.", "{verb} two values.",
    "Return the {noun} of {0} and {1}.", "Calculate the {noun} of two numbers.",
    "{verb} the two numbers and return the result.", "Returns the {noun}.", "",
]  # fmt: skip
OPENERS = [
    "You are a math assistant.", "Answer the user's question.", "Solve the math problem.",
    "Help the user with arithmetic.", "You are a helpful assistant.", "Answer math questions.",
    "You solve arithmetic questions for the user.", "",
]  # fmt: skip
TOOL_RULES = [
    "Use the calculator tools.", "Use the available tools for every calculation.",
    "You must call a tool to compute the result.", "Do not compute the answer yourself.",
    "Never state a result without calling a tool.", "Always use a tool for arithmetic.",
    "Call the right tool for each step.", "Use tools for the math, not mental arithmetic.", "",
]  # fmt: skip
TOOL_OF_SYMBOL = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}
CLOSERS = ["Then give the final answer.", "Reply with the number only.", "Be brief.", ""]


def description(rng: random.Random, op: Operation, args: tuple[str, ...]) -> str:
    if op.noun in DESCRIPTIONS:
        return rng.choice(DESCRIPTIONS[op.noun]).format(*args)
    return rng.choice(TWO_ARG_TEMPLATES).format(*args, verb=op.verb, noun=op.noun)


def system_prompt(rng: random.Random) -> str:
    parts = [rng.choice(OPENERS), rng.choice(TOOL_RULES), rng.choice(CLOSERS)]
    return " ".join(p for p in parts if p)


def operands(rng: random.Random, symbol: str) -> tuple[int, int, float]:
    """Two operands for ``symbol`` and the result (a division that comes out whole), computed
    by the runtime's calculator table."""
    a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
    if symbol == "/":
        b = rng.randint(1, 10)
        a = b * rng.randint(0, MAX_OPERAND // 3)
    (tool,) = [t for t in CALCULATOR if t.name == TOOL_OF_SYMBOL[symbol]]
    return a, b, tool(a, b)


def calculator_episode(rng: random.Random, sum_share: float = 0.6) -> ToolEpisode:
    """A question with one operator, asked of a calculator agent drawn fresh (2-7 tools)."""
    asked = [op for op in OPERATIONS if op.symbol]
    target = asked[0] if rng.random() < sum_share else rng.choice(asked[1:])
    others = [op for op in OPERATIONS if op is not target]
    chosen = [target, *rng.sample(others, rng.randint(1, len(others)))]
    if rng.random() < 0.5:  # as calculators usually list them: in the table's order
        chosen.sort(key=OPERATIONS.index)
    else:
        rng.shuffle(chosen)
    client = rng.choice(CLIENTS)
    kind = rng.choice(("number", "integer", "number"))
    tools, call_name, call_args = [], "", ("a", "b")
    for op in chosen:
        name, args = rng.choice(op.names), rng.choice(op.args)
        tools.append(chat_tool(client, name, description(rng, op, args), args, kind))
        if op is target:
            call_name, call_args = name, args
    if client == "agents_sdk" and rng.random() < 0.2:
        tools += [handoff_tool(n) for n in rng.sample(AGENT_NAMES, rng.randint(1, 2))]
    messages: list[dict[str, Any]] = []
    prompt = system_prompt(rng)
    if prompt:
        messages.append({"role": "system", "content": prompt})
    a, b, value = operands(rng, target.symbol or "+")
    messages.append({"role": "user", "content": f"What is {a}{target.symbol}{b}?"})
    answer = str(int(value)) if float(value).is_integer() else str(value)
    result = f"{float(value)}" if client == "agents_sdk" or rng.random() < 0.3 else answer
    call = {"name": call_name, "arguments": dict(zip(call_args, (a, b), strict=True))}
    return ToolEpisode(messages, tools, call, result, answer)
