# SPDX-License-Identifier: Apache-2.0
"""The rule registry: one module per family, each rule a class with code, message and docs."""

from areal_lint.rules import blocking, coroutines, optin, per_episode, rewards
from areal_lint.rules.base import Rule

# Order matters: the first family to report a node wins (the most specific code).
FAMILIES = [blocking, coroutines, rewards, per_episode, optin]
ALL_RULES: list[type[Rule]] = [rule for family in FAMILIES for rule in family.RULES]
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "FAMILIES", "RULES_BY_CODE", "Rule"]
