# SPDX-License-Identifier: Apache-2.0
"""Best-effort ruff formatting of a generated file, with the target repository's settings."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath


def ruff_formatted(repo: Path, path: PurePosixPath, text: str) -> str:
    """``text`` with its imports sorted and formatted as ruff would at ``repo/path`` (the
    settings that path gets); ``text`` unchanged when ruff is not installed or fails.

    ruff sorts ``from pkg.mod import X`` as first-party only when ``pkg/mod.py`` exists, so a
    file importing another generated file is formatted after that one is written.
    """
    try:
        from ruff import find_ruff_bin

        ruff = find_ruff_bin()
    except (ImportError, FileNotFoundError):
        return text
    for command in (["check", "--fix", "--select", "I", "--exit-zero"], ["format"]):
        proc = subprocess.run(
            [ruff, *command, "-q", "--stdin-filename", str(repo / path), "-"],
            input=text.encode("utf-8"),
            capture_output=True,
            cwd=repo,
            check=False,
        )
        if proc.returncode == 0:
            text = proc.stdout.decode("utf-8")
    return text
