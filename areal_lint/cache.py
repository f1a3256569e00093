# SPDX-License-Identifier: Apache-2.0
"""A content cache for the CLI, as ruff keeps one: a file whose text did not change is not linted.

An entry is keyed on the file's bytes, the effective settings (the ``--arl-*`` options,
``--select`` and ``--ignore``) and the linter itself (its version and the size and mtime of its
own modules, so an edited checkout never reads results of older rules). The path is not part of
the key: findings are stored without it, so a copy of a file is a hit too. Per-file ignores are
applied after the cache, and only plain lint runs read or write it (``--fix``/``--diff`` never).

Layout: ``<root>/.areal_lint_cache/<settings>/<aa>/<content key>.json``, with a ``.gitignore``
holding ``*`` at the top (as ``.ruff_cache`` has). Every write goes to a temporary file in the
same folder and is renamed into place, so concurrent runs see a whole entry or none. A cache that
cannot be read or written is skipped: it only ever saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from areal_lint import __version__
from areal_lint.options import LintOptions
from areal_runtime.utils.files import atomic_write_text

DIR_NAME = ".areal_lint_cache"
ENV_DIR = "AREAL_LINT_CACHE_DIR"  # overrides where the cache lives (tests, CI caches)


def _linter_fingerprint() -> str:
    """Version plus each module's size and mtime: cheap (a stat per module), and it changes
    whenever a rule does in a development checkout."""
    package = Path(__file__).resolve().parent
    parts = [__version__]
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        parts.append(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def settings_key(options: LintOptions, select: set[str], ignore: set[str]) -> str:
    """One folder per combination of settings that can change what a file's findings are."""
    settings = {
        "linter": _linter_fingerprint(),
        "select": sorted(select),
        "ignore": sorted(ignore),
        "options": {
            name: sorted(value.items()) if isinstance(value, dict) else sorted(value)
            if isinstance(value, set) else value
            for name, value in sorted(vars(options).items())
            if name != "reward_pattern"  # compiled from reward_name_regex
        },
    }  # fmt: skip
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_dir(root: Path) -> Path:
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else root / DIR_NAME


class Cache:
    """Findings (without their path) by content, for one combination of settings."""

    def __init__(self, directory: Path, settings: str) -> None:
        self.top = directory
        self.folder = directory / settings
        self.usable = True

    @staticmethod
    def key(content: bytes) -> str:
        return hashlib.sha256(content).hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> list[dict[str, Any]] | None:
        """The findings stored for this content, with ``path`` put back; None on a miss."""
        try:
            stored = json.loads(self._entry(key).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(stored, list):
            return None
        return [{"path": path, **finding} for finding in stored]

    def first_time(self, note: str) -> bool:
        """Whether ``note`` was never shown with this cache (and remember that it now was): a
        note about the configuration is for the first run, not for every pre-commit run."""
        marker = self.top / "notes" / hashlib.sha256(note.encode()).hexdigest()[:16]
        if marker.exists():
            return False
        try:
            self._make_top()
            marker.parent.mkdir(exist_ok=True)
            marker.touch()
        except OSError:
            pass  # cannot remember: show it every time
        return True

    def _make_top(self) -> None:
        if not self.top.exists():
            self.top.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.top / ".gitignore", "# created by areal-lint\n*\n")

    def put(self, key: str, findings: list[dict[str, Any]]) -> None:
        if not self.usable:
            return
        stored = [{k: v for k, v in f.items() if k != "path"} for f in findings]
        entry = self._entry(key)
        try:
            self._make_top()
            entry.parent.mkdir(parents=True, exist_ok=True)
            # No fsync: an entry lost in a power cut is only a cache miss, and one per linted
            # file would slow a cold run; the rename still keeps every entry whole.
            atomic_write_text(entry, json.dumps(stored), fsync=False)
        except OSError:
            self.usable = False  # a read-only tree: lint on without a cache
