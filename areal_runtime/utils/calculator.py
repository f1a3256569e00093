# SPDX-License-Identifier: Apache-2.0
"""The six calculator tools of AReaL's tool agents, as one table every SDK wrapper reads.

AReaL's OpenAI Agents SDK, LangChain and Claude Code agents offer the same six operations but
spell them differently (``power(a, b)`` beside ``power(base, exponent)``, each SDK its own
descriptions); the schemas a model sees must stay each agent's, so the table keeps a spelling
per SDK while the arithmetic and its refusals exist once. The embedded model's tool-calling
episodes (``models.tool_episodes``) are drawn from the Agents SDK spelling. Standard library
only: the SDK modules wrap :func:`plain_function` with their own decorators.
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Spelling = Literal["agents_sdk", "langchain", "claude_code"]


def _no_zero_divisor(_a: float, b: float) -> str | None:
    return "Division by zero is not allowed." if b == 0 else None


def _not_negative(n: float) -> str | None:
    return "Cannot take the square root of a negative number." if n < 0 else None


@dataclass(frozen=True)
class CalculatorTool:
    """One operation: what it computes, what it refuses, and each SDK's (description, params)."""

    name: str
    compute: Callable[..., float]
    spellings: dict[Spelling, tuple[str, tuple[str, ...]]]
    refuse: Callable[..., str | None] | None = None
    # A spelling's own wording of the refusal (AReaL's Claude Code tools word theirs apart).
    refusals: dict[Spelling, str] = field(default_factory=dict)

    def __call__(self, *values: float, spelling: Spelling | None = None) -> float:
        """The result, or ValueError with the refusal (a zero divisor, a negative root) in
        ``spelling``'s words."""
        refusal = self.refuse(*values) if self.refuse is not None else None
        if refusal is not None:
            raise ValueError(self.refusals.get(spelling, refusal) if spelling else refusal)
        return self.compute(*values)


_AB = ("a", "b")
CALCULATOR: tuple[CalculatorTool, ...] = (
    CalculatorTool(
        "add",
        operator.add,
        {
            "agents_sdk": ("Add two numbers.", _AB),
            "langchain": ("Add two numbers.", _AB),
            "claude_code": ("Add two numbers", _AB),
        },
    ),
    CalculatorTool(
        "subtract",
        operator.sub,
        {
            "agents_sdk": ("Subtract b from a.", _AB),
            "langchain": ("Subtract the second number from the first.", _AB),
            "claude_code": ("Subtract two numbers", _AB),
        },
    ),
    CalculatorTool(
        "multiply",
        operator.mul,
        {
            "agents_sdk": ("Multiply two numbers.", _AB),
            "langchain": ("Multiply two numbers.", _AB),
            "claude_code": ("Multiply two numbers", _AB),
        },
    ),
    CalculatorTool(
        "divide",
        operator.truediv,
        {
            "agents_sdk": ("Divide a by b (b must not be zero).", _AB),
            "langchain": ("Divide the first number by the second (not zero).", _AB),
            "claude_code": ("Divide two numbers (b must not be zero)", _AB),
        },
        _no_zero_divisor,
        {"claude_code": "Division by zero"},
    ),
    CalculatorTool(
        "power",
        operator.pow,
        {
            "agents_sdk": ("Raise a to the power b.", _AB),
            "langchain": ("Raise base to the power exponent.", ("base", "exponent")),
            "claude_code": ("Raise base to the exponent power", ("base", "exponent")),
        },
    ),
    CalculatorTool(
        "sqrt",
        math.sqrt,
        {
            "agents_sdk": ("The square root of a (a must not be negative).", ("a",)),
            "langchain": ("The square root of n (not negative).", ("n",)),
            "claude_code": ("Calculate square root of a non-negative number", ("n",)),
        },
        _not_negative,
        {"claude_code": "Cannot sqrt negative number"},
    ),
)


def spelled(spelling: Spelling) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(name, description, parameter names)`` of every tool, as ``spelling`` writes them."""
    return [(t.name, *t.spellings[spelling]) for t in CALCULATOR]


def plain_function(tool: CalculatorTool, spelling: Spelling, module: str) -> Callable[..., float]:
    """``tool`` as a Python function with ``spelling``'s name, float parameters and docstring,
    which is what the Agents SDK's ``function_tool`` and LangChain's ``tool`` read a schema from."""
    description, params = tool.spellings[spelling]
    signature = inspect.Signature(
        [
            inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=float)
            for p in params
        ],
        return_annotation=float,
    )

    def function(*args: float, **kwargs: float) -> float:
        bound = signature.bind(*args, **kwargs)
        return tool(*(bound.arguments[p] for p in params))

    function.__name__ = function.__qualname__ = tool.name
    function.__doc__ = description
    function.__module__ = module
    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__annotations__ = {**dict.fromkeys(params, float), "return": float}
    return function
