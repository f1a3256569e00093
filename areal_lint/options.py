# SPDX-License-Identifier: Apache-2.0
"""Configuration knobs shared by the flake8 plugin and the ``areal-lint`` CLI."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The ``--arl-<flag>`` options, for both the CLI and flake8 (which also reads them from config).
FLAGS = {
    "episode-methods": "extra episode method names (comma-separated); default arun_episode",
    "blocking-calls": "extra blocking calls as pattern->suggestion (comma-separated)",
    "reward-functions": "names of reward functions to treat as such (comma-separated)",
    "reward-name-regex": "regex of names that look like reward functions",
    "heavy-calls": "extra heavy set-up calls to report inside episodes (comma-separated)",
    "per-episode-ok": "classes that may be built per episode (comma-separated)",
    "enable": "opt-in codes to enable, e.g. ARL901,ARL902",
}

DEFAULT_REWARD_REGEX = (
    r"(^|_)(reward|rewards|score|compute_score|verify|grade|judge|evaluate)(_|$)|_rm$"
)


@dataclass
class LintOptions:
    """What the rules treat as episodes, blocking calls, reward functions and heavy set-up."""

    episode_methods: set[str] = field(default_factory=lambda: {"arun_episode"})
    blocking_calls: dict[str, str] = field(default_factory=dict)  # fnmatch pattern -> suggestion
    reward_functions: set[str] = field(default_factory=set)
    reward_name_regex: str = DEFAULT_REWARD_REGEX
    heavy_calls: set[str] = field(default_factory=set)
    per_episode_ok: set[str] = field(default_factory=lambda: {"ArealOpenAI"})
    enable: set[str] = field(default_factory=set)  # opt-in ARL9xx codes

    def __post_init__(self) -> None:
        try:
            self.reward_pattern = re.compile(self.reward_name_regex)
        except re.error as exc:
            raise ValueError(f"--arl-reward-name-regex is not a valid regex: {exc}") from None


def split_list(value: str | list[str] | None) -> set[str]:
    """Comma- or newline-separated values, as flake8 config files write them."""
    if value is None:
        return set()
    items = value if isinstance(value, list) else re.split(r"[,\n]", value)
    return {item.strip() for item in items if item and item.strip()}


def parse_blocking_calls(value: str | list[str] | None) -> dict[str, str]:
    """``pattern->suggestion`` pairs (the suggestion is optional)."""
    out = {}
    for item in split_list(value):
        pattern, _, suggestion = item.partition("->")
        out[pattern.strip()] = suggestion.strip()
    return out


def options_from_flags(values: object) -> LintOptions:
    """Options from an object with one ``arl_<flag>`` attribute per flag (argparse, flake8)."""
    return options_from(
        **{
            flag.replace("-", "_"): getattr(values, "arl_" + flag.replace("-", "_"))
            for flag in FLAGS
        }
    )


def options_from(
    *,
    episode_methods: str | None = None,
    blocking_calls: str | None = None,
    reward_functions: str | None = None,
    reward_name_regex: str | None = None,
    heavy_calls: str | None = None,
    per_episode_ok: str | None = None,
    enable: str | None = None,
) -> LintOptions:
    """Build options from the raw strings of ``--arl-*`` flags or config entries."""
    opts = LintOptions()
    opts.episode_methods |= split_list(episode_methods)
    opts.blocking_calls = parse_blocking_calls(blocking_calls)
    opts.reward_functions = split_list(reward_functions)
    if reward_name_regex:
        opts.reward_name_regex = reward_name_regex
    opts.heavy_calls = split_list(heavy_calls)
    opts.per_episode_ok |= split_list(per_episode_ok)
    opts.enable = {c.upper() for c in split_list(enable)}
    opts.__post_init__()
    return opts
