# SPDX-License-Identifier: Apache-2.0
"""The README's Layout names every package folder, so a newcomer's map matches the tree."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("areal_devkit", "areal_lint", "areal_runtime")
TOP_LEVEL = ("template", "examples", "benchmarks", "tests", "docs", "scripts")


def layout_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Layout\n\n```\n(.*?)^```", text, flags=re.S | re.M)
    assert match, "README.md has no '## Layout' section with a code block"
    return match.group(1)


def package_folders() -> list[str]:
    """Each package and its sub-packages one level down (``areal_runtime/engine/``)."""
    folders = []
    for package in PACKAGES:
        folders.append(f"{package}/")
        for init in sorted((ROOT / package).glob("*/__init__.py")):
            folders.append(f"{init.parent.relative_to(ROOT).as_posix()}/")
    return folders


def test_layout_names_every_package_folder_and_top_level_folder():
    named = {line.split()[0] for line in layout_block().splitlines() if line.strip()}
    missing = [f for f in [*package_folders(), *(f"{t}/" for t in TOP_LEVEL)] if f not in named]
    assert not missing, f"README.md's Layout does not name: {', '.join(missing)}"


def test_layout_names_no_folder_that_is_gone():
    for line in layout_block().splitlines():
        if line.strip() and not line.startswith(" "):
            path = line.split()[0]
            assert (ROOT / path).exists(), f"README.md's Layout names {path}, which does not exist"
