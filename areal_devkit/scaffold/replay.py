# SPDX-License-Identifier: Apache-2.0
"""The answers of the last scaffold, in cookiecutter's replay file, for ``--replay`` (either
tool). The file is one per user, so it records which repository its answers were given in,
and answers given in another repository are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from areal_devkit.errors import UsageError
from areal_devkit.runtime_facade import atomic_write_text
from areal_devkit.scaffold.render import template_dir

ANSWERS_REPO = "__answers_repo"  # the template value naming the answers' repository


def replay_file() -> Path:
    """cookiecutter's replay file for this template (one per user, not per repository)."""
    from cookiecutter.config import get_user_config

    return Path(get_user_config()["replay_dir"]) / f"{template_dir().name}.json"


def save_answers(repo: Path, values: dict[str, Any]) -> None:
    """Save ``values`` (every template value) as cookiecutter saves a run's, stamped with
    ``repo``, so that ``areal-devkit new --replay`` and ``cookiecutter --replay`` read them."""
    from cookiecutter.replay import dump

    template, here = str(template_dir()), str(repo.resolve())
    saved = {
        **values,
        ANSWERS_REPO: here,
        "_template": template,
        "_output_dir": here,
        "_repo_dir": template,
        "_checkout": None,
    }
    dump(str(replay_file().parent), template_dir().name, {"cookiecutter": saved})


def stamp_replay(repo: Path) -> None:
    """Record in the replay file which repository its answers belong to (pre-gen hook)."""
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
