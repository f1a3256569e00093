# SPDX-License-Identifier: Apache-2.0
"""AReaL's examples/agent_workflow/configs.py with ``areal`` renamed to ``areal_runtime``.

The default workflow is the runtime's mirror of AReaL's OpenAI math agent (AReaL's file
defaults to the LangChain one and its ``config.yaml`` picks the OpenAI one).
"""

from dataclasses import dataclass, field

from areal_runtime.api.cli_args import PPOConfig


@dataclass
class AgentConfig(PPOConfig):
    """PPOConfig plus the agent workflow to train and evaluate, as in AReaL's example."""

    workflow: str = field(
        default="areal_runtime.workflow.openai.math_agent.MathAgent",
        metadata={"help": "Import path of the agent class trained on."},
    )
    eval_workflow: str = field(
        default="areal_runtime.workflow.openai.math_agent.MathAgent",
        metadata={"help": "Import path of the agent class evaluated."},
    )
    max_turns: int = field(
        default=10,
        metadata={"help": "Maximum turns for multi-turn agents."},
    )
