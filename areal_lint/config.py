# SPDX-License-Identifier: Apache-2.0
"""``[tool.areal-lint]`` in ``pyproject.toml``, found by walking up from the linted paths.

As with ruff, the nearest ``pyproject.toml`` that has the section wins, searched from the first
linted path (a file's folder, or the folder itself) up to the filesystem root; a
``pyproject.toml`` without the section is passed over. Keys are the command-line option names
without dashes in front (``select``, ``ignore``, ``exclude``, ``per-file-ignores`` and every
``arl-*`` option, with or without the ``arl-`` prefix); a value is a string or a list of strings
(``per-file-ignores`` is a table: glob -> codes; ``cache`` is true or false; ``cache-dir`` is
relative to the ``pyproject.toml``). Command-line flags take precedence.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from areal_lint.options import FLAGS

LIST_KEYS = ("select", "ignore", "exclude")
KNOWN = {
    *LIST_KEYS, "per-file-ignores", "cache", "cache-dir", *FLAGS, *(f"arl-{flag}" for flag in FLAGS)
}  # fmt: skip


class ConfigError(ValueError):
    """A ``[tool.areal-lint]`` section that cannot be used (exit status 2)."""


@dataclass
class Config:
    path: Path | None = None  # the pyproject.toml it came from
    values: dict[str, str | bool] = field(default_factory=dict)  # option (dest) -> raw value
    per_file_ignores: dict[str, set[str]] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


def find_pyproject(paths: list[str]) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.areal-lint]`` section above ``paths[0]``."""
    start = Path(paths[0] if paths else ".").resolve()
    if not start.is_dir():
        start = start.parent
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "areal-lint" in _tool_table(candidate):
            return candidate
    return None


def _tool_table(path: Path) -> dict:
    try:
        with path.open("rb") as f:
            return tomllib.load(f).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _as_text(key: str, value: object, path: Path) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise ConfigError(f"{path}: [tool.areal-lint] {key} must be a string or a list of strings")


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    section = _tool_table(path).get("areal-lint", {})
    unknown = sorted(set(section) - KNOWN)
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.areal-lint] key(s): {', '.join(unknown)}")
    config = Config(path)
    for key, value in section.items():
        if key == "cache":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: [tool.areal-lint] cache must be true or false")
            config.values["no_cache"] = not value
            continue
        if key == "cache-dir":
            folder = Path(_as_text(key, value, path)).expanduser()
            config.values["cache_dir"] = str(
                folder if folder.is_absolute() else path.parent / folder
            )
            continue
        if key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: [tool.areal-lint] per-file-ignores must be a table")
            config.per_file_ignores = {
                glob: {c.strip() for c in _as_text(glob, codes, path).split(",") if c.strip()}
                for glob, codes in value.items()
            }
            continue
        name = key if key in LIST_KEYS or key.startswith("arl-") else f"arl-{key}"
        config.values[name.replace("-", "_")] = _as_text(key, value, path)
    return config


def parse_per_file_ignores(text: str) -> dict[str, set[str]]:
    """flake8's form: ``glob:CODE,CODE glob2:CODE`` (spaces or newlines between entries)."""
    out: dict[str, set[str]] = {}
    for entry in text.split():
        glob, sep, codes = entry.rpartition(":")
        if not sep or not glob:
            raise ConfigError(f"--per-file-ignores: {entry!r} is not glob:CODES")
        out.setdefault(glob, set()).update(c for c in codes.split(",") if c)
    return out
