# SPDX-License-Identifier: Apache-2.0
"""The pinned AReaL release's source tree (its ``examples/``), fetched at test time.

AReaL's wheel and sdist hold only the ``areal`` package; its examples live in the GitHub tag
of the release pinned in ``scripts/areal-version.txt``. They are never copied into this
repository: the first test that needs them unpacks the tag once into ``.venv-areal/``.

Where from, in order:
- ``AREAL_SOURCE``: a checkout of AReaL (a folder with ``examples/``) or a git directory
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
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
            if not name.startswith("examples/") or member.issym() or member.islnk():
                continue
            member.name = name
            tar.extract(member, into, filter="data")


def _from_source(source: Path, tag: str, into: Path) -> None:
    if (source / "examples").is_dir():
        shutil.copytree(source / "examples", into / "examples")
        return
    proc = subprocess.run(
        ["git", f"--git-dir={source}", "archive", "--format=tar", tag, "examples"],
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"AREAL_SOURCE={source} is neither a checkout with examples/ nor a git directory "
            f"holding the tag {tag}: {proc.stderr.decode(errors='replace').strip()}"
        )
    _unpack(proc.stdout, into, strip=False)


def release_tree() -> Path:
    """A folder holding the pinned release's ``examples/`` (unpacked once, then reused)."""
    version = release_version()
    tag = f"v{version}"
    target = _cache_dir(version)
    if (target / "examples").is_dir():
        return target
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
                    f"cannot download AReaL {tag}'s examples from {url} ({exc}); offline, set "
                    "AREAL_SOURCE to a checkout of AReaL or a git directory holding the tag"
                ) from None
            _unpack(data, partial, strip=True)
        if not (partial / "examples").is_dir():
            raise RuntimeError(f"AReaL {tag} as fetched has no examples/ folder")
        try:
            partial.rename(target)
        except OSError:  # another run unpacked it first
            shutil.rmtree(partial, ignore_errors=True)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def renamed(text: str) -> str:
    """AReaL's import lines and import strings with ``areal`` renamed to ``areal_runtime``.

    Mechanical, as a user porting a file would do it with a search and replace: ``import
    areal``, ``from areal.x``/``from areal import`` and ``"areal.x.Y"`` strings.
    """
    text = re.sub(r"^(\s*)from areal(\.| import)", r"\1from areal_runtime\2", text, flags=re.M)
    text = re.sub(r"^(\s*)import areal(\.|\s|$)", r"\1import areal_runtime\2", text, flags=re.M)
    return re.sub(r"([\"'\s:])areal\.(\w)", r"\1areal_runtime.\2", text)
