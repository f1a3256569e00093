# SPDX-License-Identifier: Apache-2.0
"""Scaffold a workflow with the cookiecutter template, all or nothing.

The template renders into a fresh staging folder inside the repository (its root folder is
``.areal-devkit-staging-<random>``, so plain ``cookiecutter template`` works from a repository
root). The pre-generation hook checks the names against the repository; the post-generation
hook copies the package ``__init__.py`` into the staging folder, registers the export there,
and calls :func:`commit_staged`, which moves the module, the test and the edited
``__init__.py`` into place. A journal written before the moves lets the next run finish moves
a kill interrupted, so the repository is either unchanged or fully generated and registered.
:func:`scaffold` (``areal-devkit new``) checks first, then runs the same template.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from areal_devkit.errors import UsageError
from areal_devkit.runtime_facade import atomic_write_text
from areal_devkit.scaffold.validation import validate
from areal_devkit.scaffold.variants import generated_paths

JOURNAL = ".areal-devkit-new.journal"
STAGING_PREFIX = ".areal-devkit-staging-"


def template_dir() -> Path:
    """The cookiecutter template, shipped inside the package (``template/`` links to it)."""
    path = Path(__file__).resolve().parents[1] / "template"
    if not (path / "cookiecutter.json").is_file():
        raise UsageError(
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


ANSWERS_REPO = "__answers_repo"  # stamped into cookiecutter's replay file by the hook


def replay_file() -> Path:
    """cookiecutter's replay file for this template (one per user, not per repository)."""
    from cookiecutter.config import get_user_config

    return Path(get_user_config()["replay_dir"]) / f"{template_dir().name}.json"


def stamp_replay(repo: Path) -> None:
    """Record in the replay file which repository its answers belong to (post-gen hook)."""
    path = replay_file()
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        saved["cookiecutter"][ANSWERS_REPO] = str(repo.resolve())
    except (OSError, ValueError, KeyError, TypeError):
        return  # no replay file (cookiecutter did not write one): nothing to stamp
    atomic_write_text(path, json.dumps(saved, indent=2))


def replay_refusal(repo: Path, answers_repo: str) -> str | None:
    """Why replayed answers must not be used in ``repo``: they are another repository's."""
    if answers_repo and Path(answers_repo) != repo.resolve():
        return (
            f"the answers to replay were given in {answers_repo}, not in this repository "
            f"({repo.resolve()}); run without --replay here"
        )
    return None


def last_answers(repo: Path) -> dict[str, Any]:
    """The answers of the last scaffold in ``repo`` (cookiecutter's replay file), for ``--replay``."""
    from cookiecutter.replay import load

    try:
        saved = load(str(replay_file().parent), template_dir().name)["cookiecutter"]
    except (OSError, ValueError) as exc:
        raise UsageError(f"no answers of an earlier run to replay ({exc})") from None
    refusal = replay_refusal(repo, saved.get(ANSWERS_REPO, ""))
    if refusal is not None:
        raise UsageError(refusal)
    return {k: v for k, v in saved.items() if not k.startswith("_")}


def scaffold(repo: Path, context: dict[str, Any] | None, *, replay: bool = False) -> list[Path]:
    """Generate a workflow into ``repo``; returns the files written or changed.

    Raises :class:`ScaffoldRefused` (after printing the reasons) when the input is refused.
    """
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    if not repo.is_dir():
        raise UsageError(f"repository {repo} does not exist")
    finish_interrupted(repo)
    values = render_values(last_answers(repo) if replay else dict(context or {}))
    errors = validate(repo, **{k: values[k] for k in VALIDATED})
    if errors:
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        print("nothing was written.", file=sys.stderr)
        raise ScaffoldRefused()
    # cookiecutter logs a traceback for a refused hook; the hook already printed the reasons.
    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)
    try:
        cookiecutter(
            str(template_dir()),
            no_input=True,
            extra_context=values,
            output_dir=str(repo),
            accept_hooks=True,
        )
    except FailedHookException:
        raise ScaffoldRefused() from None
    module, test = generated_paths(values["package"], values["workflow_name"])
    return [repo / module, repo / test, repo / module.parent / "__init__.py"]


VALIDATED = ("workflow_name", "class_name", "package", "variant", "max_turns", "turn_discount")


def stage_init(staging: Path, repo: Path, package: str) -> Path:
    """Copy the package's ``__init__.py`` into the staging folder, where the hook edits it."""
    init = Path(*package.split(".")) / "__init__.py"
    (staging / init).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(repo / init, staging / init)
    return staging / init


def commit_staged(staging: Path, package: str, workflow_name: str) -> list[Path]:
    """Move the staged module, test and ``__init__.py`` into the repository, then drop the
    staging folder; the repository is the staging folder's parent."""
    repo = staging.parent
    module, test = generated_paths(package, workflow_name)
    moves = [(f"{staging.name}/{p}", str(p)) for p in (module, test, module.parent / "__init__.py")]
    _apply(repo, moves)
    shutil.rmtree(staging, ignore_errors=True)
    return [repo / dst for _, dst in moves]


def _apply(repo: Path, moves: list[tuple[str, str]]) -> None:
    """Write the journal, move every file into place, then drop the journal."""
    for _, dst in moves:
        (repo / dst).parent.mkdir(parents=True, exist_ok=True)
    journal = repo / JOURNAL
    atomic_write_text(journal, json.dumps(moves))
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
    for torn in repo.glob(f".{JOURNAL}.*.tmp"):  # an atomic write of the journal, cut short
        torn.unlink(missing_ok=True)
    for stale in repo.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    return finished
