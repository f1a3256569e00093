# SPDX-License-Identifier: Apache-2.0
"""The unvalidated parse gives libcst's own tree, rejects what libcst rejects, and leaves node
validation on for every tree built outside it."""

from __future__ import annotations

import gc
import re
from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTValidationError

from areal_lint.runner import lint_source, might_have_findings, parse_unvalidated

EVAL_FILES = sorted((Path(__file__).parent / "eval_files").glob("*.py"))


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: p.name)
def test_the_tree_is_libcsts(path: Path) -> None:
    source = path.read_text()
    tree = parse_unvalidated(source)
    assert tree.deep_equals(cst.parse_module(source))
    assert tree.code == source


@pytest.mark.parametrize(
    "source",
    [
        "def f(a=1, b): pass\n",
        "f(**k, *a)\n",
        "f(a=1, b)\n",
        "def f(*): pass\n",
        "del f()\n",
        "(a, b) += 1\n",
        "class C(x for x in y): pass\n",
        "x = 0777\n",
        "async def f(:\n    pass\n",
    ],
)
def test_a_syntax_error_is_still_one(source: str) -> None:
    with pytest.raises(cst.ParserSyntaxError):
        cst.parse_module(source)
    with pytest.raises(cst.ParserSyntaxError):
        parse_unvalidated(source)


def test_validation_and_the_collector_are_back_afterwards() -> None:
    assert gc.isenabled()
    lint_source("async def f():\n    import time\n    time.sleep(1)\n")
    with pytest.raises(cst.ParserSyntaxError):
        parse_unvalidated("def f(*): pass\n")
    assert gc.isenabled()
    with pytest.raises(CSTValidationError):  # a hand-built node is validated again
        cst.Integer("abc")


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: p.name)
def test_the_tree_is_freed_without_the_collector(path: Path) -> None:
    """No reference cycle holds a file's tree once it is linted: the collector is paused while
    a file is linted, so a cycle would keep every node until the next full collection."""
    source = path.read_text()
    lint_source(source, str(path))  # first run: caches built on first use are not garbage
    gc.collect()
    gc.disable()
    gc.freeze()  # what exists now is not this run's: the collections below skip it (fast)
    try:
        lint_source(source, str(path))
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kept = [o for o in gc.garbage if isinstance(o, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.unfreeze()
        gc.enable()
    assert not kept, f"{len(kept)} tree nodes were only freed by the cyclic collector"


_OLD_CHECK = re.compile(r"\basync(?:\s|\\)+def\b|AsyncRewardWrapper")


@pytest.mark.parametrize(
    "source",
    [
        "async def f(): pass",
        "x = 1\nasync  def f(): pass",
        "async\\\n def f(): pass",
        "xasync def f(): pass",
        "_async def",
        "éasync def f",
        "²async def f",
        "(async def",
        "asyncdef f",
        "async define",
        "async def_",
        "xasync def async def",
        "w = AsyncRewardWrapper",
        "import asyncio\nasync with x: pass",
        "",
    ],
)
def test_the_fast_text_check_is_the_pattern(source: str) -> None:
    assert might_have_findings(source) == (_OLD_CHECK.search(source) is not None)


def test_the_fast_text_check_agrees_on_real_files() -> None:
    roots = [Path(__file__).parents[2] / d for d in ("areal_lint", "areal_runtime", "tests")]
    for path in (p for root in roots for p in root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert might_have_findings(source) == (_OLD_CHECK.search(source) is not None), path
