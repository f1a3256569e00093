# SPDX-License-Identifier: Apache-2.0
"""The rule registry: one module per family, each with its rules and one visitor."""

from areal_lint.rules import blocking, coroutines, optin, per_episode, rewards, trajectories
from areal_lint.rules.base import FamilyVisitor, Rule

MODULES = [blocking, coroutines, rewards, per_episode, trajectories, optin]
FAMILIES: list[type[FamilyVisitor]] = [
    blocking.BlockingVisitor,
    coroutines.CoroutinesVisitor,
    rewards.RewardsVisitor,
    per_episode.PerEpisodeVisitor,
    trajectories.TrajectoriesVisitor,
    optin.OptInVisitor,
]
ALL_RULES: list[type[Rule]] = sorted(
    (rule for module in MODULES for rule in module.RULES), key=lambda rule: rule.code
)
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "FAMILIES", "MODULES", "RULES_BY_CODE", "Rule"]
