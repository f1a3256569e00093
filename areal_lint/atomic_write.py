# SPDX-License-Identifier: Apache-2.0
"""One way to write a file so that a half-written one never replaces the original."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    A file that already exists keeps its permission bits (``mkstemp`` makes 0600 files, which
    would otherwise turn a fixed source file private).
    """
    import tempfile  # only when writing: a run that only reads never imports it

    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
