# SPDX-License-Identifier: Apache-2.0
"""Where the per-variant reward figures live, read and written in one place.

Three copies for three readers: the table in docs/own_project.md (the source), the README's
tour table and each generated test's docstring. ``bench_variant_rewards.py --write`` writes
all three; ``tests/areal_devkit/test_reward_figures.py`` checks that they agree.
"""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path("docs/own_project.md")
README = Path("README.md")
TEST_TEMPLATES = Path("areal_devkit/template/templates/tests")
BLOCK = re.compile(r"(<!-- variant-rewards[^\n]*\n)(.*?)(<!-- /variant-rewards -->)", re.S)
PAGE_ROW = re.compile(r"^\| `(\w+)` \| (\d\.\d{3}) \| (\d\.\d{3}) \| (\d+ of \d+) \|$", re.M)
README_CELL = re.compile(r"^(\| `(\w+)` \|.*\| )(\d\.\d{2}) -> (\d\.\d{2})( \|)$", re.M)
DOCSTRING = re.compile(r"(no flags\): )(\d\.\d{3})( at the start, )(\d\.\d{3})( after \d+)")

Figures = dict[str, tuple[str, str, str]]  # variant -> (starts at, reaches, flat steps)


def page_figures(root: Path) -> Figures:
    block = BLOCK.search((root / PAGE).read_text(encoding="utf-8"))
    if block is None:
        raise ValueError(f"{PAGE} has no <!-- variant-rewards --> block")
    return {m[1]: (m[2], m[3], m[4]) for m in PAGE_ROW.finditer(block.group(2))}


def readme_figures(root: Path) -> dict[str, tuple[str, str]]:
    text = (root / README).read_text(encoding="utf-8")
    return {m[2]: (m[3], m[4]) for m in README_CELL.finditer(text)}


def template_figures(root: Path) -> dict[str, tuple[str, str]]:
    found = {}
    for path in sorted((root / TEST_TEMPLATES).glob("*.py.jinja")):
        match = DOCSTRING.search(path.read_text(encoding="utf-8"))
        if match:
            found[path.name.removesuffix(".py.jinja")] = (match[2], match[4])
    return found


def replace_figures(root: Path, measured: Figures) -> list[Path]:
    """Write ``measured`` into the three places; returns the files changed."""
    figures = {**page_figures(root), **measured}
    rows = "".join(f"| `{v}` | {a} | {b} | {flat} |\n" for v, (a, b, flat) in figures.items())
    header = (
        "| variant | starts at | reaches | steps with no reward variance |\n|---|---|---|---|\n"
    )
    changed = []

    def rewrite(path: Path, text: str) -> None:
        if (root / path).read_text(encoding="utf-8") != text:
            (root / path).write_text(text, encoding="utf-8")
            changed.append(root / path)

    page = (root / PAGE).read_text(encoding="utf-8")
    rewrite(PAGE, BLOCK.sub(lambda m: m[1] + header + rows + m[3], page))
    readme = (root / README).read_text(encoding="utf-8")
    rewrite(
        README,
        README_CELL.sub(
            lambda m: (
                f"{m[1]}{float(figures[m[2]][0]):.2f} -> {float(figures[m[2]][1]):.2f}{m[5]}"
                if m[2] in figures
                else m[0]
            ),
            readme,
        ),
    )
    for path in sorted((root / TEST_TEMPLATES).glob("*.py.jinja")):
        variant = path.name.removesuffix(".py.jinja")
        if variant in figures:
            start, end, _ = figures[variant]
            line = rf"\g<1>{start}\g<3>{end}\g<5>"
            rewrite(path.relative_to(root), DOCSTRING.sub(line, path.read_text(encoding="utf-8")))
    return changed
