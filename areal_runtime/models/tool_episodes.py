# SPDX-License-Identifier: Apache-2.0
"""Synthetic tool-calling episodes for the embedded model, shaped as each client sends them.

An episode is "What is a+b?" with a tool list in the prompt: the assistant calls the sum tool
(its name and argument names copied from the schema, the operands from the question), a tool
message carries the result, and the assistant answers with it. The tool lists mirror what the
proxy turns each client's request into: the OpenAI Agents SDK (Responses function tools with
pydantic titles, handoff tools ``transfer_to_*``), Anthropic (``input_schema``) and plain
OpenAI chat ``tools``. Names are drawn from disjoint pools so an evaluation can use tool and
argument names the model never saw in training.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any, Literal

from areal_runtime.models.default_model import MAX_OPERAND
from areal_runtime.utils.calculator import spelled

Split = Literal["train", "held_out"]
CLIENTS = ("agents_sdk", "anthropic", "chat")
# The agents that ship with areal-devkit and the runtime, as the proxy renders their requests:
# the `agent_openai_agents` and `agent_anthropic` template variants and AReaL's MathToolAgent.
BUNDLED = ("agents_sdk_add", "anthropic_add", "calculator")

# Sum-tool names and argument-name pairs: the held-out pools share no name with training.
SUM_NAMES = {
    "train": [
        "add", "sum", "plus", "add_numbers", "sum_two", "calc_add", "addition_tool", "total",
        "add_ints", "compute_sum", "do_add", "get_sum", "adder", "sum_values", "math_add",
    ],
    "held_out": ["tally", "accumulate", "combine", "aggregate", "sigma", "merge_counts"],
}  # fmt: skip
ARG_NAMES = {
    "train": [
        ("a", "b"), ("x", "y"), ("first", "second"), ("num1", "num2"), ("left", "right"),
        ("m", "n"), ("lhs", "rhs"), ("p", "q"), ("value1", "value2"), ("n1", "n2"),
        ("number_a", "number_b"), ("i", "j"),
    ],
    "held_out": [("u", "v"), ("alpha", "beta"), ("term1", "term2"), ("augend", "addend")],
}  # fmt: skip
SUM_DESCRIPTIONS = [
    "Add two numbers.",
    "Return the sum of two numbers.",
    "Adds two integers.",
    "Sum two values.",
    "Add them and return the total.",
    "",
]
# Other tools an agent offers next to the sum: (name, description, argument names).
# First the runtime's calculator (AReaL's Agents SDK MathToolAgent) without its sum tool.
CALCULATOR_TOOLS = spelled("agents_sdk")
DISTRACTORS = [
    *(tool for tool in CALCULATOR_TOOLS if tool[0] != "add"),
    ("get_weather", "Get the weather for a city.", ("city",)),
    ("search", "Search the web.", ("query",)),
    ("lookup", "Look up a word in the dictionary.", ("word",)),
]
USUAL_SHARE = 0.6  # training episodes whose sum tool is the usual add(a, b)
INVENTED_SHARE = 0.5  # other training episodes whose tool and argument names are made up
SYLLABLES = ["ka", "lo", "mi", "ru", "te", "zo", "ba", "ne", "fi", "go", "pu", "sa", "vo", "di"]


def invented_name(rng: random.Random, parts: int) -> str:
    """A made-up identifier (``"kalo_mi"``): names the model can only copy, not memorise."""
    words = ["".join(rng.choices(SYLLABLES, k=rng.randint(1, 2))) for _ in range(parts)]
    return "_".join(words)


AGENT_NAMES = ["Math Tutor", "Billing", "Spanish", "Triage", "Research", "Calculator Expert"]
SYSTEM_PROMPTS = [
    "Answer the question. Use the add tool for sums.",
    "Solve the user's math question with the calculator tools. Do every calculation with a "
    "tool call instead of stating the result yourself.",
    "You are a helpful assistant.",
    "Use the tools when needed.",
    "Answer with the sum.",
]


@dataclass(frozen=True)
class ToolEpisode:
    """One episode's prompts and targets: turn 1 calls the tool, turn 2 answers."""

    messages: list[dict[str, Any]]  # system (maybe) + the user's question
    tools: list[dict[str, Any]]  # chat-format tools, as the proxy renders them
    call: dict[str, Any]  # {"name": ..., "arguments": {...}}
    result: str  # what the tool message carries
    answer: str

    def call_text(self) -> str:
        """The assistant's first turn, in the chat template's tool-call format."""
        return f"<tool_call>{json.dumps(self.call)}</tool_call>"

    def after_call(self) -> list[dict[str, Any]]:
        """The conversation once the tool answered (what the client sends for turn 2)."""
        call = {
            "id": "call_0",
            "type": "function",
            "function": {
                "name": self.call["name"],
                "arguments": json.dumps(self.call["arguments"]),
            },
        }
        return [
            *self.messages,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": self.result},
        ]


def _schema(client: str, name: str, args: tuple[str, ...], kind: str) -> dict[str, Any]:
    if client == "agents_sdk":  # pydantic's schema of a function_tool's signature
        return {
            "properties": {a: {"title": a.title(), "type": kind} for a in args},
            "required": list(args),
            "title": f"{name}_args",
            "type": "object",
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "properties": {a: {"type": kind} for a in args},
        "required": list(args),
    }


def chat_tool(
    client: str, name: str, description: str, args: tuple[str, ...], kind: str = "number"
) -> dict[str, Any]:
    """A tool as the proxy hands it to the chat template, for ``client``'s request shape."""
    schema = _schema(client, name, args, kind)
    if client == "chat":
        fn: dict[str, Any] = {"name": name}
        if description:
            fn["description"] = description
        fn["parameters"] = schema
    else:  # Responses and Messages tools become {name, parameters, description}
        fn = {"name": name, "parameters": schema}
        if description:
            fn["description"] = description
    return {"type": "function", "function": fn}


def handoff_tool(agent_name: str) -> dict[str, Any]:
    """The Agents SDK's handoff tool for a sub-agent (no arguments)."""
    slug = agent_name.lower().replace(" ", "_")
    return {
        "type": "function",
        "function": {
            "name": f"transfer_to_{slug}",
            "parameters": {
                "additionalProperties": False,
                "type": "object",
                "properties": {},
                "required": [],
            },
            "description": f"Handoff to the {agent_name} agent to handle the request. ",
        },
    }


def bundled_episode(rng: random.Random, shape: str) -> ToolEpisode:
    """A question asked by one of the ``BUNDLED`` agents, with its exact tools and system prompt."""
    a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
    question = {"role": "user", "content": f"What is {a}+{b}?"}
    if shape == "agents_sdk_add":
        tools = [chat_tool("agents_sdk", "add", "Add two numbers.", ("a", "b"))]
        messages = [{"role": "system", "content": SYSTEM_PROMPTS[0]}, question]
    elif shape == "anthropic_add":
        tools = [chat_tool("anthropic", "add", "Add two numbers.", ("a", "b"))]
        messages = [question]
    elif shape == "calculator":
        tools = [chat_tool("agents_sdk", n, d, args) for n, d, args in CALCULATOR_TOOLS]
        messages = [{"role": "system", "content": SYSTEM_PROMPTS[1]}, question]
    else:
        raise ValueError(f"unknown bundled shape {shape!r}; use one of {BUNDLED}")
    call = {"name": "add", "arguments": {"a": a, "b": b}}
    return ToolEpisode(messages, tools, call, f"{float(a + b)}", str(a + b))


def sample_episode(
    rng: random.Random,
    split: Split = "train",
    max_tools: int = 6,
    usual_share: float | None = None,
    alone_share: float = 0.6,
) -> ToolEpisode:
    """A random episode: a client shape, a tool list around the sum tool, a question."""
    client = rng.choice(CLIENTS)
    a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
    # Training leans on the names the bundled agents use (few shapes: the skill stays partial).
    share = USUAL_SHARE if usual_share is None else usual_share
    usual = split == "train" and rng.random() < share
    name = "add" if usual else rng.choice(SUM_NAMES[split])
    args = ("a", "b") if usual and rng.random() < 0.8 else rng.choice(ARG_NAMES[split])
    invented = split == "train" and not usual and rng.random() < INVENTED_SHARE
    if invented:
        name = invented_name(rng, rng.randint(1, 2))
        args = (invented_name(rng, 1), invented_name(rng, 1))
        while args[1] == args[0]:
            args = (args[0], invented_name(rng, 1))
    kind = rng.choice(("number", "integer"))
    described = [d for d in SUM_DESCRIPTIONS if d]  # a made-up name needs its description
    description = rng.choice(described if invented else SUM_DESCRIPTIONS)
    tools = [chat_tool(client, name, description, args, kind)]
    if rng.random() < alone_share:
        others = []
    elif rng.random() < 0.5:  # AReaL's calculator agent: the other five tools
        others = DISTRACTORS[:5]
    else:
        others = rng.sample(DISTRACTORS, rng.randint(1, min(max_tools, len(DISTRACTORS)) - 1))
    tools += [chat_tool(client, n, d, a_, kind) for n, d, a_ in others if n != name]
    if client == "agents_sdk" and rng.random() < 0.3:
        tools += [handoff_tool(n) for n in rng.sample(AGENT_NAMES, rng.randint(1, 2))]
    rng.shuffle(tools)
    messages: list[dict[str, Any]] = []
    if client != "anthropic" or rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
    messages.append({"role": "user", "content": f"What is {a}+{b}?"})
    total = a + b
    result = f"{float(total)}" if client == "agents_sdk" or rng.random() < 0.3 else str(total)
    call = {"name": name, "arguments": {args[0]: a, args[1]: b}}
    return ToolEpisode(messages, tools, call, result, str(total))


CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def parsed_call(text: str) -> dict[str, Any] | None:
    """The first well-formed ``<tool_call>`` in ``text`` (name + arguments object), or None."""
    match = CALL.search(text)
    if match is None:
        return None
    try:
        call = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
        return None
    return call
