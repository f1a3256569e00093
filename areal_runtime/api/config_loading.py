# SPDX-License-Identifier: Apache-2.0
"""Loading experiment configs with AReaL's semantics: Hydra's compose, OmegaConf's merge.

``load_expr_config(argv, GRPOConfig)`` reads ``--config file.yaml`` plus Hydra overrides
(``key.sub=value`` for a key the file sets, ``+key=value`` to add one, ``++key=value`` to add or
set, ``~key`` to delete), merges the result into the dataclass as an OmegaConf structured
config (so a YAML ``10`` for a float field is ``10.0``, ``${a.b}`` interpolation sees the
dataclass defaults) and builds the dataclass, running each ``__post_init__`` check. This is
what AReaL's ``areal.api.cli_args.load_expr_config`` does; errors here are :class:`ConfigError`
messages that name the key, the valid keys and the fix instead of Hydra/OmegaConf tracebacks.

Why not a hand-written loader: a user's AReaL YAML must mean here what it means there, and
only the same libraries give the same conversions, interpolation and override grammar.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import logging
import typing
import warnings
from pathlib import Path
from typing import Any, TypeVar

logger = logging.getLogger("areal_runtime.cli_args")

ConfigT = TypeVar("ConfigT")


class ConfigError(ValueError):
    """A config file or override that cannot be loaded; the message names the key and the fix."""


_REJECTION_SAMPLING = (
    "use the rejection_sampling section instead (behave_imp_weight_mode 'disabled' -> "
    "rejection_sampling: null; 'token_mask' with cap X -> {level: token, action: mask, "
    "metric: ratio, upper: X}; 'token_truncate' -> the same with action: clamp)"
)
REMOVED_KEYS = {
    "behave_imp_weight_cap": _REJECTION_SAMPLING,
    "behave_imp_weight_mode": _REJECTION_SAMPLING,
}
"""Keys AReaL dropped, with the replacement (AReaL's loader names it too)."""


def _field_type(cls: type, name: str) -> Any:
    """The dataclass type of ``cls.name`` (``X`` from ``X | None``), else None."""
    tp = typing.get_type_hints(cls).get(name)
    for candidate in (tp, *typing.get_args(tp)):
        if dataclasses.is_dataclass(candidate):
            return candidate
    return None


def _schema_at(config_cls: type, dotted: str) -> tuple[type | None, str]:
    """The dataclass holding the last part of ``dotted`` and that part's name.

    ``(None, part)`` when a middle part is no nested dataclass (an ``Any`` mapping: anything goes).
    """
    parts = dotted.split(".")
    cls: type | None = config_cls
    for part in parts[:-1]:
        if cls is None or part not in {f.name for f in dataclasses.fields(cls)}:
            return None, parts[-1]
        cls = _field_type(cls, part)
    return cls, parts[-1]


def unknown_key_message(config_cls: type, dotted: str) -> str | None:
    """A message for ``dotted`` when the schema has no such key, else None."""
    cls, last = _schema_at(config_cls, dotted)
    if cls is None:
        return None
    valid = sorted(f.name for f in dataclasses.fields(cls) if not f.name.startswith("_"))
    if last in valid:
        return None
    where = dotted.rpartition(".")[0]
    prefix = f"{where}." if where else ""
    if last in REMOVED_KEYS:
        return f"config key '{dotted}' was removed from AReaL: {REMOVED_KEYS[last]}"
    close = difflib.get_close_matches(last, valid, n=1)
    return (
        f"unknown config key '{dotted}' ({cls.__name__})"
        + (f"; did you mean '{prefix}{close[0]}'?" if close else "")
        + f" Valid keys at {where or 'the top level'}: {', '.join(valid)}"
    )


def _omegaconf_error(exc: Exception, config_cls: type) -> ConfigError:
    """An OmegaConf merge/build error as a ConfigError naming the key."""
    from omegaconf.errors import ConfigKeyError, ValidationError

    full_key = str(getattr(exc, "full_key", "") or "")
    if isinstance(exc, ConfigKeyError) and full_key:
        message = unknown_key_message(config_cls, full_key)
        if message:
            return ConfigError(message)
    first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, ValidationError) and full_key:
        return ConfigError(f"{full_key}: {first_line}")
    return ConfigError(f"{full_key or config_cls.__name__}: {first_line}")


def structured(config_cls: type[ConfigT], data: Any) -> ConfigT:
    """``data`` (a mapping or an OmegaConf node) merged into ``config_cls``'s defaults and built.

    Used by the loader and by anything else that turns a plain mapping into a config dataclass
    (``areal-devkit run --kwargs``): the same conversions and checks as a YAML file gets.
    """
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        merged = OmegaConf.merge(OmegaConf.structured(config_cls), data or {})
        return typing.cast(ConfigT, OmegaConf.to_object(merged))
    except OmegaConfBaseException as exc:
        raise _omegaconf_error(exc, config_cls) from None
    except (TypeError, ValueError) as exc:  # a __post_init__ check
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(str(exc)) from None


def build_config(cls: type[ConfigT], data: dict[str, Any] | None, where: str = "") -> ConfigT:
    """Instantiate dataclass ``cls`` from a nested dict (kept for callers of the old loader)."""
    del where
    return structured(cls, data)


def compose(config_file: Path, overrides: list[str], config_cls: type) -> Any:
    """The file plus Hydra overrides, composed as AReaL's ``parse_cli_args`` composes them."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException
    from yaml import YAMLError

    if config_file.suffix != ".yaml":
        raise ConfigError(
            f"config file {config_file} must end in .yaml (Hydra, which AReaL loads configs "
            "with, only finds .yaml files); rename it"
        )
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    try:
        # hydra-core 1.4.0.dev1 (AReaL's pin) warns whether version_base is given or not; the
        # user can do nothing about it, so it is not shown.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"[\s\S]*version_base parameter")
            with initialize_config_dir(
                config_dir=str(config_file.parent), job_name="app", version_base=None
            ):
                return hydra_compose(config_name=config_file.stem, overrides=overrides)
    except YAMLError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"{config_file} is not valid YAML: {first}") from None
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(_hydra_message(exc, overrides, config_cls, config_file)) from None
    finally:
        GlobalHydra.instance().clear()


def _hydra_message(exc: Exception, overrides: list[str], config_cls: type, file: Path) -> str:
    text = str(exc).strip()
    if "Could not override" in text:
        for item in overrides:
            key = item.partition("=")[0].lstrip("+~")
            if f"'{key}'" in text:
                unknown = unknown_key_message(config_cls, key)
                if unknown:
                    return unknown
                return (
                    f"cannot override {key}: {file.name} does not set it. Add it with "
                    f"+{item.lstrip('+')} (Hydra's grammar, as in AReaL: key=value changes a "
                    "key the file has, +key=value adds one, ++key=value does either)"
                )
    if "Could not append to config" in text:
        key = text.partition("already at '")[2].partition("'")[0]
        return (
            f"{file.name} sets {key} already: change it with {key}=value (without +), or "
            f"++{key}=value to set it whether or not the file has it"
        )
    if "mismatched input" in text or "no viable alternative" in text or "token recognition" in text:
        return (
            f"cannot read an override: {text.splitlines()[0]}. Write key.sub=value "
            "(e.g. actor.optimizer.lr=1e-4), quoting values with spaces"
        )
    return f"{file.name}: {text.splitlines()[0]}"


def ignored_fields_set(config: Any, prefix: str = "") -> list[str]:
    """Dotted names of ignored fields whose value differs from the default."""
    found: list[str] = []
    if not dataclasses.is_dataclass(config):
        return found
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        name = f"{prefix}{f.name}"
        if f.metadata.get("ignored"):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            used = f.metadata.get("used", ())
            if used and isinstance(value, dict):
                found.extend(f"{name}.{key}" for key in value if key not in used)
            elif value != default and value not in (None, {}, [], ""):
                found.append(name)
        elif dataclasses.is_dataclass(value):
            found.extend(ignored_fields_set(value, name + "."))
    return found


_reported_ignored: set[tuple[str, ...]] = set()


def report_ignored(config: Any) -> list[str]:
    """Log, once per distinct set, which AReaL settings have no effect on one machine."""
    names = ignored_fields_set(config)
    key = tuple(names)
    if names and key not in _reported_ignored:
        _reported_ignored.add(key)
        logger.warning(
            "ignored on one machine (cluster, GPU, backend and scheduler settings): %s",
            ", ".join(names),
        )
    return names


def parse_cli_args(argv: list[str]) -> tuple[Path, list[str]]:
    """``(absolute config file, Hydra overrides)``; a leading ``*.py`` argument is skipped."""
    args = list(argv)
    if args and args[0].endswith(".py"):
        args = args[1:]
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config")
    known, overrides = parser.parse_known_args(args)
    if known.config is None:
        raise ConfigError(
            "no --config given: run it as `python script.py --config file.yaml [key.sub=value ...]`"
        )
    config_file = Path(known.config).absolute()
    if not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    return config_file, overrides


def load_expr_config(argv: list[str], config_cls: type[ConfigT]) -> tuple[ConfigT, str]:
    """AReaL's ``load_expr_config``: ``--config file.yaml`` plus Hydra overrides.

    Returns ``(config, absolute path of the config file)``. Settings that have no effect on
    one machine are logged once as ignored.
    """
    config_file, overrides = parse_cli_args(argv)
    composed = compose(config_file, overrides, config_cls)
    config = structured(config_cls, composed)
    report_ignored(config)
    return config, str(config_file)
