# SPDX-License-Identifier: Apache-2.0
"""Scaffold a workflow with the cookiecutter template, all or nothing.

:func:`scaffold` checks the names against the repository, renders the template into a staging
folder inside the repository (with a copy of the package ``__init__.py``, which the template's
hook edits there), and only then moves the module, the test and the edited ``__init__.py`` into
place. A journal written before the moves lets the next ``areal-devkit new`` finish moves a kill
interrupted, so the repository is either unchanged or fully generated and registered.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from areal_devkit.scaffold.validation import validate
from areal_devkit.scaffold.variants import generated_paths

JOURNAL = ".areal-devkit-new.journal"
STAGING_PREFIX = ".areal-devkit-staging-"


def template_dir() -> Path:
    """The cookiecutter template, shipped inside the package (``template/`` links to it)."""
    path = Path(__file__).resolve().parents[1] / "template"
    if not (path / "cookiecutter.json").is_file():
        raise FileNotFoundError(
            f"the cookiecutter template is missing from {path}; reinstall areal-devkit"
        )
    return path


class ScaffoldRefused(Exception):
    """The input was refused; the reasons were printed, and nothing was written."""


def render_values(context: dict[str, Any]) -> dict[str, Any]:
    """Every template value (``class_name``, ``runtime`` ... filled in) for ``context``."""
    from cookiecutter.generate import generate_context
    from cookiecutter.prompt import prompt_for_config

    template = template_dir()
    sys.path.insert(0, str(template))  # the template's Jinja extensions (local_extensions.py)
    try:
        full = generate_context(str(template / "cookiecutter.json"), extra_context=context)
        values = prompt_for_config(full, no_input=True)
    finally:
        sys.path.remove(str(template))
    return {k: v for k, v in values.items() if not k.startswith("_")}


def last_answers() -> dict[str, Any]:
    """The answers of the last scaffold (cookiecutter's replay file), for ``--replay``."""
    from cookiecutter.config import get_user_config
    from cookiecutter.replay import load

    try:
        saved = load(get_user_config()["replay_dir"], template_dir().name)
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(f"no answers of an earlier run to replay ({exc})") from None
    return {k: v for k, v in saved["cookiecutter"].items() if not k.startswith("_")}


def scaffold(repo: Path, context: dict[str, Any] | None, *, replay: bool = False) -> list[Path]:
    """Generate a workflow into ``repo``; returns the files written or changed.

    Raises :class:`ScaffoldRefused` (after printing the reasons) when the input is refused.
    """
    if not repo.is_dir():
        raise FileNotFoundError(f"repository {repo} does not exist")
    finish_interrupted(repo)
    values = render_values(last_answers() if replay else dict(context or {}))
    errors = validate(
        repo,
        **{
            k: values[k]
            for k in (
                "workflow_name",
                "class_name",
                "package",
                "variant",
                "max_turns",
                "turn_discount",
            )
        },
    )
    if errors:
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        print("nothing was written.", file=sys.stderr)
        raise ScaffoldRefused()
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=repo))
    try:
        moves = _render_into(staging, repo, values)
        _apply(repo, moves)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [repo / dst for _, dst in moves]


def _render_into(staging: Path, repo: Path, values: dict[str, Any]) -> list[tuple[str, str]]:
    """Render the template into ``staging``; ``(staged, target)`` paths relative to the roots."""
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    module, test = generated_paths(values["package"], values["workflow_name"])
    init = module.parent / "__init__.py"
    (staging / init).parent.mkdir(parents=True)
    shutil.copy2(repo / init, staging / init)
    # cookiecutter logs a traceback for a refused hook; the hook already printed the reasons.
    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)
    try:
        cookiecutter(
            str(template_dir()),
            no_input=True,
            extra_context=values,
            output_dir=str(staging),
            overwrite_if_exists=True,
            skip_if_file_exists=True,
            accept_hooks=True,
        )
    except FailedHookException:
        raise ScaffoldRefused() from None
    rel = staging.name
    return [(f"{rel}/{path}", str(path)) for path in (module, test, init)]


def _apply(repo: Path, moves: list[tuple[str, str]]) -> None:
    """Write the journal, move every file into place, then drop the journal."""
    for _, dst in moves:
        (repo / dst).parent.mkdir(parents=True, exist_ok=True)
    journal = repo / JOURNAL
    tmp = journal.with_name(JOURNAL + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(moves, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, journal)
    _move_all(repo, moves)
    journal.unlink()


def _move_all(repo: Path, moves: list[tuple[str, str]]) -> None:
    for src, dst in moves:
        if (repo / src).exists():
            os.replace(repo / src, repo / dst)


def finish_interrupted(repo: Path) -> bool:
    """Complete the moves of a scaffold that was killed half-way; drop stale staging folders."""
    journal = repo / JOURNAL
    finished = False
    if journal.is_file():
        moves = json.loads(journal.read_text(encoding="utf-8"))
        _move_all(repo, moves)
        journal.unlink()
        print(f"areal-devkit new: finished an interrupted scaffold ({moves[0][1]})")
        finished = True
    (repo / (JOURNAL + ".tmp")).unlink(missing_ok=True)
    for stale in repo.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    return finished
