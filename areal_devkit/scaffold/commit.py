# SPDX-License-Identifier: Apache-2.0
"""Write a scaffold's files into the repository all or nothing, even under SIGKILL.

A redo journal, and nothing else. :func:`write_all` first writes one file at the repository
root, ``.areal-devkit-new.journal``, holding every path with its complete new text (and which
of them ruff formats); it is written atomically (a temporary beside it, fsynced, renamed).
Then each file is written atomically in its own folder, in order, and the journal is deleted.

Why a kill at any instant leaves the repository unchanged or complete:

- before the journal's rename nothing in the repository has changed (at most the journal's
  own temporary exists, which :func:`finish_interrupted` deletes);
- from the rename until the journal is deleted, the journal holds the whole outcome, so
  :func:`finish_interrupted` (which every ``areal-devkit new`` runs first) writes every file
  again from it. Writing a file with the text it already has changes nothing, so it does not
  matter how many files the killed run had written, and a kill during recovery is recovered
  the same way. It also deletes the temporaries that killed writes left beside the files.
  (ruff formats the same text at the same place the same way, on the first run or a later.)

A new file's folder (``tests/``) is made only after the journal exists, so an early kill does
not leave an empty folder behind either.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from areal_devkit.runtime_facade import atomic_write_text
from areal_devkit.scaffold.formatting import ruff_formatted

JOURNAL = ".areal-devkit-new.journal"
STAGING_PREFIX = ".areal-devkit-staging-"  # the folder plain ``cookiecutter`` renders into


def write_all(
    repo: Path, files: dict[PurePosixPath, str], ruff: Iterable[PurePosixPath] = ()
) -> None:
    """Write ``{path relative to repo: text}`` into ``repo`` in order, all or nothing (see
    above); the ``ruff`` paths formatted just before they are written."""
    journal = repo / JOURNAL
    entries = {"files": {str(p): text for p, text in files.items()}, "ruff": list(map(str, ruff))}
    atomic_write_text(journal, json.dumps(entries))
    _replay(repo, journal)


def _replay(repo: Path, journal: Path) -> list[str]:
    """Write every file the journal holds, then delete the journal; returns the paths."""
    entries = json.loads(journal.read_text(encoding="utf-8"))
    for path, text in entries["files"].items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        for torn in target.parent.glob(f".{target.name}.*.tmp"):  # a killed write's temporary
            torn.unlink(missing_ok=True)
        if path in entries["ruff"]:
            text = ruff_formatted(repo, PurePosixPath(path), text)
        atomic_write_text(target, text)
    journal.unlink()
    return list(entries["files"])


def finish_interrupted(repo: Path) -> bool:
    """Finish the writes of a scaffold killed half-way (True if there was one); delete what a
    killed run left: the journal's temporary, plain ``cookiecutter``'s staging folders."""
    journal = repo / JOURNAL
    finished = False
    if journal.is_file():
        paths = _replay(repo, journal)
        print(f"areal-devkit new: finished an interrupted scaffold ({paths[0]})")
        finished = True
    for torn in repo.glob(f".{JOURNAL}.*.tmp"):  # an atomic write of the journal, cut short
        torn.unlink(missing_ok=True)
    for stale in repo.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    return finished
