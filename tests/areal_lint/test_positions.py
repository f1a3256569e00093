"""The lean position pass gives exactly libcst's PositionProvider ranges."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from areal_lint.positions import positions_of

EVAL_FILES = sorted((Path(__file__).parent / "eval_files").glob("*.py"))
ODD_SOURCE = (
    "@decorator\r\n"
    "async def f(a,\r\n      b):  # comment\r\n"
    "    x = [1,\r\n         2]; y = 'a\\\r\nb'\r\n"
    "    return await g(x, y)\r\n"
)


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    nodes: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    module.visit(Collect())
    return nodes


def _expected(module: cst.Module, nodes: list[cst.CSTNode]) -> dict[int, tuple]:
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {
        id(n): (
            (ranges[n].start.line, ranges[n].start.column),
            (ranges[n].end.line, ranges[n].end.column),
        )
        for n in nodes
    }


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: p.name)
def test_every_node_matches_position_provider(path: Path) -> None:
    module = cst.parse_module(path.read_text())
    nodes = _all_nodes(module)
    assert positions_of(module, nodes) == _expected(module, nodes)


def test_a_few_targets_match_and_crlf_is_counted() -> None:
    module = cst.parse_module(ODD_SOURCE)
    nodes = _all_nodes(module)
    expected = _expected(module, nodes)
    for seed in range(20):
        chosen = random.Random(seed).sample(nodes, 3)
        assert positions_of(module, chosen) == {id(n): expected[id(n)] for n in chosen}


def test_a_foreign_node_is_refused() -> None:
    module = cst.parse_module("x = 1\n")
    with pytest.raises(ValueError, match="not part of the module: Name"):
        positions_of(module, [cst.Name("y")])


@pytest.mark.parametrize("path", EVAL_FILES[:6], ids=lambda p: p.name)
def test_a_few_targets_in_a_real_file_stop_early_and_match(path: Path) -> None:
    """The pass stops after the last asked-for node; the ranges are still the provider's."""
    module = cst.parse_module(path.read_text())
    nodes = _all_nodes(module)
    expected = _expected(module, nodes)
    for seed in range(5):
        chosen = random.Random(seed).sample(nodes, 2)
        assert positions_of(module, chosen) == {id(n): expected[id(n)] for n in chosen}
