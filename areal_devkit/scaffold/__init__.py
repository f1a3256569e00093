# SPDX-License-Identifier: Apache-2.0
"""Scaffold a workflow with the cookiecutter template, safely.

:func:`scaffold` always passes the flags that make generating into an existing repository safe
(overwrite allowed only for the project root ``.``, existing files skipped, hooks on): the hooks
validate the names before anything is written and register the export afterwards.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any


def template_dir() -> Path:
    """The cookiecutter template, shipped inside the package (``template/`` links to it)."""
    path = Path(__file__).resolve().parents[1] / "template"
    if not (path / "cookiecutter.json").is_file():
        raise FileNotFoundError(
            f"the cookiecutter template is missing from {path}; reinstall areal-devkit"
        )
    return path


class ScaffoldRefused(Exception):
    """A template hook refused the input; it already printed why, and nothing was written."""


def scaffold(repo: Path, context: dict[str, Any] | None, *, replay: bool = False) -> None:
    """Generate a workflow into ``repo`` from ``context`` (or the last answers with ``replay``)."""
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    if not repo.is_dir():
        raise FileNotFoundError(f"repository {repo} does not exist")
    # cookiecutter logs a traceback for a refused hook; the hook already printed the reasons.
    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)
    try:
        cookiecutter(
            str(template_dir()),
            no_input=not replay,
            replay=replay or None,
            extra_context=None if replay else context,
            output_dir=str(repo),
            overwrite_if_exists=True,
            skip_if_file_exists=True,
            accept_hooks=True,
        )
    except FailedHookException:
        raise ScaffoldRefused() from None
