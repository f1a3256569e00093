# SPDX-License-Identifier: Apache-2.0
"""``rollout.agent``: AReaL's ``AgentConfig`` settings that change what an agent trains on.

``mode`` (inline / subproc) is where the agent runs (online: outside clients run it against the
trainer's gateway, ``trainer/online.py``); ``export_style`` (individual / concat) and
``turn_discount`` shape the exported trajectory and its per-turn rewards; ``chat_template_type``
and ``engine_max_tokens`` go to the proxy; ``tool_call_parser`` / ``reasoning_parser`` are
checked against the formats the proxy parses. Cluster-side keys (``scheduling_spec``, ``admin_api_key``,
``agent_cls_path`` ...) are accepted and have no effect on one machine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

MODES = ("inline", "subproc", "online")
EXPORT_STYLES = ("individual", "concat")
CHAT_TEMPLATES = ("hf", "concat")
# The proxy parses <tool_call>{json}</tool_call> blocks, the format these parsers share; it
# leaves <think> reasoning in the reply text (AReaL's reasoning parsers move it to
# reasoning_content). The trained tokens are the sampled ones either way.
TOOL_CALL_PARSERS = ("qwen", "qwen25", "hermes")
REASONING_PARSERS = ("qwen3", "qwen3-thinking", "deepseek-r1")
ONE_MACHINE_KEYS = {
    "agent_cls_path",
    "admin_api_key",
    "scheduling_spec",
    "session_timeout_seconds",
    "set_reward_finish_timeout",
}


@dataclass(frozen=True)
class AgentSettings:
    mode: str = "inline"
    export_style: str = "individual"
    turn_discount: float = 1.0
    tool_call_parser: str = "qwen"
    reasoning_parser: str = "qwen3"
    chat_template_type: str = "hf"
    engine_max_tokens: int | None = None
    subproc_max_workers: int = 4

    def __post_init__(self) -> None:
        for name, allowed in (
            ("mode", MODES),
            ("export_style", EXPORT_STYLES),
            ("chat_template_type", CHAT_TEMPLATES),
            ("tool_call_parser", TOOL_CALL_PARSERS),
            ("reasoning_parser", REASONING_PARSERS),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"rollout.agent.{name} is {value!r}; use one of {list(allowed)}")
        if self.export_style == "concat" and self.chat_template_type != "concat":
            raise ValueError(
                "rollout.agent.export_style=concat exports one sequence per conversation, which "
                "needs chat_template_type='concat' (turns appended token by token); set "
                "rollout.agent.chat_template_type=concat, or use export_style=individual"
            )
        if not 0 < float(self.turn_discount) <= 1:
            raise ValueError(
                f"rollout.agent.turn_discount must be in (0, 1], got {self.turn_discount}"
            )
        if self.subproc_max_workers < 1:
            raise ValueError(
                f"rollout.agent.subproc_max_workers must be >= 1, got {self.subproc_max_workers}"
            )

    def proxy_options(self) -> dict[str, Any]:
        """What the executor passes when it wraps an agent in the proxy workflow."""
        return {
            "export_style": self.export_style,
            "turn_discount": float(self.turn_discount),
            "chat_template_type": self.chat_template_type,
            "engine_max_tokens": self.engine_max_tokens,
            "subproc_max_workers": self.subproc_max_workers,
        }


def agent_settings(agent: Any) -> AgentSettings:
    """``rollout.agent`` (a mapping from YAML, an object, or None) as checked settings."""
    if agent is None:
        return AgentSettings()
    if dataclasses.is_dataclass(agent) and not isinstance(agent, type):
        agent = dataclasses.asdict(agent)
    elif not isinstance(agent, dict):
        agent = {k: v for k, v in vars(agent).items() if not k.startswith("_")}
    names = {f.name for f in dataclasses.fields(AgentSettings)}
    unknown = sorted(set(agent) - names - ONE_MACHINE_KEYS)
    if unknown:
        raise ValueError(
            f"rollout.agent has unknown key(s) {unknown}; valid: {sorted(names | ONE_MACHINE_KEYS)}"
        )
    return AgentSettings(**{k: v for k, v in agent.items() if k in names})
