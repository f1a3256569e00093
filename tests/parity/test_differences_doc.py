# SPDX-License-Identifier: Apache-2.0
"""docs/runtime.md's table of deliberate differences and the tests that assert them agree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).parent
DOC = HERE.parents[1] / "docs" / "runtime.md"


def table_rows() -> list[tuple[str, str]]:
    """``(file, test)`` named in the last column of each row of the differences table."""
    section = DOC.read_text().split("### Deliberate differences from AReaL", 1)[1]
    section = section.split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    named = [re.search(r"`(test_\w+\.py)::(test_\w+)`\s*\|\s*$", row) for row in rows]
    assert all(named), [row for row, m in zip(rows, named, strict=True) if m is None]
    return [(m.group(1), m.group(2)) for m in named if m]


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_row_names_an_existing_deliberate_test() -> None:
    rows = table_rows()
    assert len(rows) >= 5
    for filename, name in rows:
        assert name.startswith("test_deliberate_"), name
        assert name in defined_tests(HERE / filename), f"{filename}::{name} does not exist"


def test_every_deliberate_test_has_a_row() -> None:
    listed = set(table_rows())
    for path in sorted(HERE.glob("test_*.py")):
        for name in defined_tests(path):
            if name.startswith("test_deliberate_"):
                assert (path.name, name) in listed, f"{path.name}::{name} missing from runtime.md"
