# SPDX-License-Identifier: Apache-2.0
"""Scaffold a workflow from the cookiecutter template into an existing repository, all or
nothing.

:func:`scaffold` (``areal-devkit new``) works in this process: it answers the template's
questions, refuses conflicts (:mod:`.validation`) before writing anything, renders the two files
with cookiecutter's own Jinja environment (:mod:`.render`), plans the edited package
``__init__.py`` (:mod:`.plan`), and writes the three under a redo journal (:mod:`.commit`),
ruff-formatting the two new files with the repository's settings as it goes. Plain
``cookiecutter template`` renders into a staging folder instead; its hooks run the same
validation, plan and commit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from areal_devkit.errors import UsageError
from areal_devkit.scaffold.commit import JOURNAL, finish_interrupted, write_all
from areal_devkit.scaffold.render import render, template_dir, template_values
from areal_devkit.scaffold.replay import last_answers, save_answers
from areal_devkit.scaffold.variants import generated_paths

__all__ = ["JOURNAL", "ScaffoldRefused", "finish_interrupted", "scaffold", "template_dir"]

VALIDATED = ("workflow_name", "class_name", "package", "variant", "max_turns", "turn_discount")


class ScaffoldRefused(Exception):
    """The input was refused; the reasons were printed, and nothing was written."""


def _refuse(errors: list[str]) -> ScaffoldRefused:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    print("nothing was written.", file=sys.stderr)
    return ScaffoldRefused()


def scaffold(repo: Path, context: dict[str, Any] | None, *, replay: bool = False) -> list[Path]:
    """Generate a workflow into ``repo``; returns the files written or changed.

    Raises :class:`ScaffoldRefused` (after printing the reasons) when the input is refused.
    """
    # Here, not at the top: every areal-devkit command imports this package for VARIANTS,
    # and libcst (validation, plan) alone takes longer to import than the rest of the CLI.
    from areal_devkit.scaffold.init_editor import InitEditError
    from areal_devkit.scaffold.plan import planned_files, refusal, summary
    from areal_devkit.scaffold.validation import validate

    if not repo.is_dir():
        raise UsageError(f"repository {repo} does not exist")
    finish_interrupted(repo)
    values = template_values(last_answers(repo) if replay else dict(context or {}))
    errors = validate(repo, **{k: values[k] for k in VALIDATED})
    if errors:
        raise _refuse(errors)
    try:
        files = planned_files(repo, values, render(values))
    except InitEditError as exc:
        raise _refuse([refusal(values, exc)]) from None
    save_answers(repo, values)
    write_all(repo, files, ruff=generated_paths(values["package"], values["workflow_name"]))
    print(summary(values))
    return [repo / path for path in files]
