# SPDX-License-Identifier: Apache-2.0
"""AReaL's multi-agent math solver (``areal.workflow.openai_agent.math_agent``).

``build_math_agent()`` returns a coordinating Agents SDK agent that hands off to four
specialists through the tools ``analyze_problem``, ``solve_problem``, ``refine_solution`` and
``verify_solution`` (AReaL's names, so recorded tool calls read the same). Run it with
``Runner.run(agent, ..., run_config=RunConfig(model_provider=OpenAIProvider(openai_client=...)))``
against the proxy, as AReaL's agent examples do.
"""

from __future__ import annotations

from areal_runtime.workflow._agent_client import missing_sdk

try:
    from agents import Agent as OpenAIAgent
    from agents import handoff
    from agents.extensions.handoff_prompt import RECOMMENDED_PROMPT_PREFIX
except ModuleNotFoundError as exc:
    raise missing_sdk(exc) from exc

__all__ = ["build_math_agent"]

# (agent name, role description); each instruction starts with the SDK's handoff prefix.
SPECIALISTS = {
    "analyze_problem": (
        "Problem Analyzer",
        "Work out the problem's structure and the approach it needs",
        "You analyze math problems: name the kind of problem, what is given, what is asked and "
        "a plan for solving it. Hand off to the Solution Specialist when a solution is needed.",
    ),
    "solve_problem": (
        "Solution Specialist",
        "Write a full solution, step by step",
        "You solve math problems step by step, showing every calculation. Hand off to the "
        "Verification Agent to check the result, or to the Refinement Agent to rework it.",
    ),
    "refine_solution": (
        "Refinement Agent",
        "Find and fix the mistakes of the current solution",
        "You review an earlier attempt, find its mistakes and give a corrected solution. Hand "
        "off to the Verification Agent for the final check.",
    ),
    "verify_solution": (
        "Verification Agent",
        "Check the solution and state the final answer",
        "You check a solution step by step, correct any error, and state the final answer. "
        "You are the last stage.",
    ),
}
COORDINATOR_NAME = "Math Problem Solver"
COORDINATOR_INSTRUCTIONS = (
    "You coordinate the solving of a math problem. Use the handoff tools: analyze the problem, "
    "then solve, refine and verify as needed, in sequence if the problem needs it, and make "
    "sure the final answer is correct and complete."
)


def build_math_agent() -> OpenAIAgent:
    """The coordinator agent with a handoff to each specialist."""
    handoffs = [
        handoff(
            agent=OpenAIAgent(name=name, instructions=f"{RECOMMENDED_PROMPT_PREFIX}\n{role}"),
            tool_name_override=tool_name,
            tool_description_override=description,
        )
        for tool_name, (name, description, role) in SPECIALISTS.items()
    ]
    return OpenAIAgent(
        name=COORDINATOR_NAME,
        instructions=f"{RECOMMENDED_PROMPT_PREFIX}\n{COORDINATOR_INSTRUCTIONS}",
        handoffs=handoffs,
    )
