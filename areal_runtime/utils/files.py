# SPDX-License-Identifier: Apache-2.0
"""Writing files so that a reader never sees half of one, and reading JSONL with line numbers.

The one place the three packages (runtime, devkit, linter) write files atomically and read
JSONL: standard library only, so the linter and the template, which must not pull torch, use it
too. A file is written to a hidden temporary beside it (same folder, same file system), flushed
and fsynced, then renamed over it; a folder is built beside its target and swapped in by two
renames. A write that fails or is interrupted leaves the previous file or folder in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "JsonlError",
    "atomic_dir",
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_text",
    "iter_jsonl",
    "read_jsonl",
    "swapped_out_dirs",
    "write_jsonl",
]


class JsonlError(ValueError):
    """A JSONL line that is not a JSON object; the message starts with ``PATH:LINE:``."""


def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the umask (``mkstemp`` would give 0600)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_open(
    path: str | Path, mode: str = "w", encoding: str = "utf-8", *, fsync: bool = True
) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` only when the ``with`` block succeeds.

    ``mode`` is ``"w"`` or ``"wb"``. An existing file keeps its permission bits (a fixed
    source file stays as it was); a new one gets those ``open()`` would give it. ``fsync=False``
    is for files that may be lost in a power cut but must never be torn (a cache entry): the
    rename alone guarantees a whole file, the fsync that it survives a crash.
    """
    import tempfile  # only when writing: a process that only reads never imports it

    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'w' or 'wb', not {mode!r}")
    target = Path(path)
    file_mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_file_mode()
    fd, tmp = tempfile.mkstemp(
        dir=target.resolve().parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        os.fchmod(fd, file_mode)
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(
    path: str | Path, text: str, encoding: str = "utf-8", *, fsync: bool = True
) -> None:
    """Replace ``path`` with ``text``; see :func:`atomic_open`."""
    with atomic_open(path, "w", encoding, fsync=fsync) as f:
        f.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data``; see :func:`atomic_open`."""
    with atomic_open(path, "wb") as f:
        f.write(data)


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> None:
    """Replace ``path`` with one JSON line per row."""
    with atomic_open(path, "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)


def iter_jsonl(path: str | Path, *, skip_invalid: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, object)`` for every non-blank line of a JSONL file.

    A line that is not JSON, or not a JSON object, raises :class:`JsonlError` naming the file
    and line; with ``skip_invalid`` it is skipped instead (a log whose writer may have been
    killed mid-line).
    """
    file = Path(path)
    with file.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                if skip_invalid:
                    continue
                raise JsonlError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                if skip_invalid:
                    continue
                raise JsonlError(f"{file}:{number}: each line must be a JSON object")
            yield number, row


def read_jsonl(path: str | Path, *, skip_invalid: bool = False) -> list[dict[str, Any]]:
    """Every object of a JSONL file; errors as in :func:`iter_jsonl`."""
    return [row for _, row in iter_jsonl(path, skip_invalid=skip_invalid)]


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def swapped_out_dirs(target: str | Path) -> list[Path]:
    """Previous versions of ``target`` an :func:`atomic_dir` swap left behind when it was killed
    between its two renames (``.NAME.old-PID``), oldest name first."""
    target = Path(target)
    return sorted(target.parent.glob(f".{target.name}.old-*"))


@contextlib.contextmanager
def atomic_dir(target: str | Path, *, fsync: bool = False, make: bool = True) -> Iterator[Path]:
    """A fresh hidden folder beside ``target`` (``.NAME.tmp-PID``) that replaces ``target``
    when the ``with`` block succeeds.

    At every moment ``target`` is the previous complete folder or the new one, except between
    the two renames, when the previous one is ``.NAME.old-PID`` (see :func:`swapped_out_dirs`).
    A failed block removes its folder; leftovers of killed swaps are removed by the next one.
    ``fsync`` flushes every file before the swap; ``make=False`` leaves creating the folder to
    the block (a ``save_pretrained`` that insists on making it).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    if make:
        tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if fsync:
        _fsync_tree(tmp)
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    for leftover in swapped_out_dirs(target):
        shutil.rmtree(leftover, ignore_errors=True)
