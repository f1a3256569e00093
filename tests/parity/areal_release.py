# SPDX-License-Identifier: Apache-2.0
"""The pinned AReaL release's source tree (its ``examples/`` and ``tests/``), fetched at test time.

AReaL's wheel and sdist hold only the ``areal`` package; its examples and tests live in the
GitHub tag of the release pinned in ``scripts/areal-version.txt``. They are never copied into
this repository: the first run that needs them unpacks the tag once into the running venv.

Where from, in order:
- ``AREAL_SOURCE``: a checkout of AReaL (a folder with ``examples/`` and ``tests/``) or a git directory
  holding the tag (``git archive`` reads the tag out of it): for machines without internet.
- the tag's tarball from GitHub.

A failure to get it fails the tests that need it, with the way to fix it (never a skip).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
import tokenize
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The release folders the suites read: AReaL's examples (tests/parity) and its own tests
# (scripts/areal_tests.py).
FOLDERS = ("examples", "tests")


def release_version() -> str:
    """``1.0.4`` from the ``areal==1.0.4`` pin."""
    for line in (ROOT / "scripts/areal-version.txt").read_text().splitlines():
        match = re.fullmatch(r"\s*areal==([\w.]+)\s*", line)
        if match:
            return match.group(1)
    raise RuntimeError("scripts/areal-version.txt has no areal==VERSION line")


def _cache_dir(version: str) -> Path:
    import sys

    venv = Path(sys.prefix)
    return venv / f"areal-release-{version}"


def _unpack(data: bytes, into: Path, strip: bool) -> None:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = member.name.split("/", 1)[1] if strip and "/" in member.name else member.name
            if strip and "/" not in member.name:
                continue
            if (
                not name.startswith(tuple(f"{f}/" for f in FOLDERS))
                or member.issym()
                or member.islnk()
            ):
                continue
            member.name = name
            tar.extract(member, into, filter="data")


def _from_source(source: Path, tag: str, into: Path) -> None:
    if all((source / folder).is_dir() for folder in FOLDERS):
        for folder in FOLDERS:
            shutil.copytree(source / folder, into / folder)
        return
    proc = subprocess.run(
        ["git", f"--git-dir={source}", "archive", "--format=tar", tag, *FOLDERS],
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"AREAL_SOURCE={source} is neither a checkout with examples/ and tests/ nor a git directory "
            f"holding the tag {tag}: {proc.stderr.decode(errors='replace').strip()}"
        )
    _unpack(proc.stdout, into, strip=False)


def release_tree() -> Path:
    """A folder holding the pinned release's ``examples/`` and ``tests/`` (unpacked once)."""
    version = release_version()
    tag = f"v{version}"
    target = _cache_dir(version)
    if all((target / folder).is_dir() for folder in FOLDERS):
        return target
    shutil.rmtree(target, ignore_errors=True)  # an older cache that holds only examples/
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    source = os.environ.get("AREAL_SOURCE")
    try:
        if source:
            _from_source(Path(source), tag, partial)
        else:
            url = f"https://github.com/inclusionAI/AReaL/archive/refs/tags/{tag}.tar.gz"
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    data = response.read()
            except OSError as exc:
                raise RuntimeError(
                    f"cannot download AReaL {tag}'s examples and tests from {url} ({exc}); offline, set "
                    "AREAL_SOURCE to a checkout of AReaL or a git directory holding the tag"
                ) from None
            _unpack(data, partial, strip=True)
        missing = [folder for folder in FOLDERS if not (partial / folder).is_dir()]
        if missing:
            raise RuntimeError(f"AReaL {tag} as fetched has no {', '.join(missing)} folder")
        try:
            partial.rename(target)
        except OSError:  # another run unpacked it first
            shutil.rmtree(partial, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def renamed(text: str) -> str:
    """AReaL's source with the package ``areal`` renamed to ``areal_runtime``, token by token.

    Mechanical, as a user porting a file does it: the name ``areal`` where it is the package
    (``import areal.x``, ``from areal import``, ``areal.x.y`` in code) and ``areal.x`` at the
    start of a dotted path inside a string (``patch("areal.x.Y")``). Nothing else changes:
    comments, other names that contain ``areal`` and the layout stay as they are.
    """
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, start, end, replacement)
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if (
            token.type == tokenize.NAME
            and token.string == "areal"
            and not (previous is not None and previous.string == ".")
        ):
            (row, col), (_, end) = token.start, token.end
            edits.append((row, col, end, "areal_runtime"))
        elif token.type == tokenize.STRING and token.start[0] == token.end[0]:
            (row, col), (_, end) = token.start, token.end
            new = _STRING_PATH.sub(r"\1areal_runtime.", token.string)
            if new != token.string:
                edits.append((row, col, end, new))
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    for row, start, end, new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "".join(lines)


# ``areal.`` opening a dotted path inside a string: after a quote, a space, a colon or a comma.
_STRING_PATH = re.compile(r"([\"'\s:,(=])areal\.(?=\w)")
