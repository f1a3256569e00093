# SPDX-License-Identifier: Apache-2.0
"""``train``'s one config route: a YAML plus ``key=value`` overrides through ``load_expr_config``.

AReaL's scripts build their config with ``load_expr_config(argv, GRPOConfig)``; ``train`` does
the same, so an AReaL YAML means here what it means there. Without ``--config`` the file is
``train_defaults.yaml`` (the bundled task's settings). Each training flag is only a name for
overrides on that route (:data:`FLAG_KEYS`); a flag and an explicit override of the same key
that disagree are refused rather than one silently winning.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.errors import UsageError

DEFAULTS_YAML = Path(__file__).with_name("train_defaults.yaml")

# flag dest -> the config keys it sets (the value is the flag's, unless a function maps it)
FLAG_KEYS: dict[str, tuple[str, ...]] = {
    "steps": ("total_train_steps",),
    "batch_size": ("train_dataset.batch_size", "rollout.consumer_batch_size"),
    "group_size": ("gconfig.n_samples",),
    "max_new_tokens": ("gconfig.max_new_tokens",),
    "temperature": ("gconfig.temperature", "actor.temperature"),
    "lr": ("actor.optimizer.lr",),
    "max_staleness": ("rollout.max_head_offpolicyness",),
    "seed": ("seed",),
    "minibatches": ("actor.ppo_n_minibatches",),
    "eps_clip": ("actor.eps_clip",),
    "kl_ctl": ("actor.kl_ctl",),
    "experiment_name": (
        "experiment_name",
        "stats_logger.experiment_name",
        "recover.experiment_name",
    ),
    "trial_name": ("trial_name", "stats_logger.trial_name", "recover.trial_name"),
    "fileroot": ("cluster.fileroot", "stats_logger.fileroot", "recover.fileroot"),
    "recover_every": ("recover.freq_steps", "recover.mode"),
}
VALUE_MAPS: dict[str, Callable[[str, Any], Any]] = {
    "recover_every": lambda key, n: "auto" if key == "recover.mode" else n,
}
OVERRIDE = re.compile(r"^(\+{0,2}[A-Za-z_][\w.]*=.*|~[A-Za-z_][\w.]*(=.*)?)$", re.S)


def is_override(token: str) -> bool:
    """Whether ``token`` has the shape of a Hydra override (``a.b=1``, ``+a=1``, ``~a``)."""
    return bool(OVERRIDE.match(token))


def flag_name(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _hydra_value(value: Any) -> str:
    """``value`` in Hydra's override grammar: strings quoted, so paths and ``:`` survive."""
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _parsed(text: str) -> Any:
    """An override's value as Hydra would read it, for comparing with a flag's."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _same(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12)
    return str(a) == str(b)


def given_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The training flags given on the command line (their defaults are None)."""
    given = {dest: getattr(args, dest, None) for dest in FLAG_KEYS}
    if not given["recover_every"]:  # 0: no recover checkpoints, the config's setting stays
        given["recover_every"] = None
    return {dest: value for dest, value in given.items() if value is not None}


def explicit_overrides(tokens: list[str]) -> dict[str, str]:
    """``key -> value text`` of the user's ``key=value`` overrides (``+``/``++`` stripped)."""
    found = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep and not key.startswith("~"):
            found[key.lstrip("+")] = value
    return found


def flag_overrides(args: argparse.Namespace, explicit: dict[str, str]) -> list[str]:
    """``++key=value`` for each given flag; UsageError naming both when an override disagrees."""
    out = []
    for dest, value in given_flags(args).items():
        for key in FLAG_KEYS[dest]:
            mapped = VALUE_MAPS[dest](key, value) if dest in VALUE_MAPS else value
            if key in explicit:
                if not _same(_parsed(explicit[key]), mapped):
                    raise UsageError(
                        f"{flag_name(dest)} {value} and the override {key}={explicit[key]} "
                        f"disagree ({flag_name(dest)} sets {key}={_hydra_value(mapped)}): give "
                        "one of them"
                    )
                continue  # the same value twice: the override says it
            out.append(f"++{key}={_hydra_value(mapped)}")
    return out


def command_overrides(args: argparse.Namespace, explicit: dict[str, str]) -> list[str]:
    """What the command itself sets: the workflow it trains, and a fresh trial name by default."""
    out = []
    if explicit.get("workflow") is not None and _parsed(explicit["workflow"]) != args.workflow:
        raise UsageError(
            f"the WORKFLOW argument {args.workflow} and the override "
            f"workflow={explicit['workflow']} disagree: give one of them"
        )
    out.append(f"++workflow={_hydra_value(args.workflow)}")
    if args.config is None and args.trial_name is None and "trial_name" not in explicit:
        name = time.strftime("run-%Y%m%d-%H%M%S-") + str(os.getpid())
        out += [f"++{key}={_hydra_value(name)}" for key in FLAG_KEYS["trial_name"]]
    return out


def train_config_class() -> type:
    """GRPOConfig plus the keys AReaL's agent example adds (its YAML sets them), so that file
    loads as it is. Built on first use: importing the runtime's configs needs its extra."""

    @dataclasses.dataclass
    class TrainConfig(runtime.GRPOConfig):  # type: ignore[misc,valid-type]
        """``train``'s config: AReaL's GRPOConfig and the agent example's extra keys."""

        workflow: str | None = None
        eval_workflow: str | None = None
        max_turns: int | None = None

    return TrainConfig


def load_train_config(args: argparse.Namespace) -> Any:
    """The config ``train`` runs: ``--config`` (or the defaults) plus flags and overrides."""
    user = list(args.overrides)
    if args.config is None:  # the defaults file is ours: any GRPOConfig key may be set
        user = [t if t.startswith(("+", "~")) else "++" + t for t in user]
    explicit = explicit_overrides(user)
    overrides = [*command_overrides(args, explicit), *flag_overrides(args, explicit), *user]
    config_file = args.config if args.config is not None else str(DEFAULTS_YAML)
    try:
        config, _ = runtime.load_expr_config(
            ["--config", config_file, *overrides], train_config_class()
        )
    except runtime.ConfigError as exc:
        raise UsageError(f"{exc}{_where(args)}") from None
    if config.actor.kl_ctl and config.ref is None:  # a KL penalty needs its reference policy
        config.ref = runtime.PPOActorConfig()
    return config


def _where(args: argparse.Namespace) -> str:
    source = f"--config {args.config}" if args.config else "the defaults (no --config)"
    return f" (loading {source}; see `areal-devkit train --help` for the flags' keys)"


def default_epochs(config: Any, rows: int, args: argparse.Namespace) -> None:
    """Without ``--config``: enough epochs over ``rows`` for every requested step, as before."""
    if args.config is None and "total_train_epochs" not in explicit_overrides(args.overrides):
        steps = config.total_train_steps
        batch = config.train_dataset.batch_size
        config.total_train_epochs = max(1, math.ceil(steps * batch / max(rows, 1)) + 1)


def flags_from_config(config: Any, args: argparse.Namespace) -> None:
    """Write the loaded values back to the flags' names, which the reports and checks read."""
    args.steps = config.total_train_steps
    args.batch_size = config.train_dataset.batch_size
    args.group_size = config.gconfig.n_samples
    args.max_new_tokens = config.gconfig.max_new_tokens
    args.temperature = config.gconfig.temperature
    args.lr = config.actor.optimizer.lr if config.actor.optimizer else None
    args.max_staleness = config.rollout.max_head_offpolicyness
    args.seed = config.seed
    args.minibatches = config.actor.ppo_n_minibatches
    args.eps_clip = config.actor.eps_clip
    args.kl_ctl = config.actor.kl_ctl
    args.experiment_name = config.experiment_name
    args.trial_name = config.trial_name
    args.fileroot = config.stats_logger.fileroot


def flag_table() -> str:
    """The flag -> key mapping, for ``--help``."""
    lines = ["flags are overrides (--config or the defaults, then flags, then KEY=VALUE):"]
    for dest, keys in FLAG_KEYS.items():
        value = "auto" if dest == "recover_every" else "V"
        shown = [f"{k}={'N' if k == 'recover.freq_steps' else value}" for k in keys]
        lines.append(f"  {flag_name(dest):<18} {' '.join(shown)}")
    return "\n".join(lines)
