# SPDX-License-Identifier: Apache-2.0
"""The runner's contracts: one check per code in its own module, one finding per node."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from areal_lint.options import options_from
from areal_lint.precedence import RANK, SPECIALISES, winner
from areal_lint.rules import ALL_RULES, MODULES
from areal_lint.runner import lint_source
from areal_lint.walk import walk


def _checks(module: object) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in vars(module).items():
        code = getattr(value, "code", None)
        if callable(value) and isinstance(code, str) and not isinstance(value, type):
            found.setdefault(code, []).append(name)
    return found


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_each_code_has_one_check_in_the_module_that_declares_it(module):
    declared = {rule.code for rule in module.RULES}
    checks = _checks(module)
    assert set(checks) == declared
    assert all(len(names) == 1 for names in checks.values()), checks


def test_rank_orders_every_code_once_and_agrees_with_the_specialisations():
    assert sorted(RANK) == sorted(rule.code for rule in ALL_RULES)
    for specific, (general, reason) in SPECIALISES.items():
        assert reason
        for code in general:
            assert winner([code, specific]) == specific, (specific, code)


def _codes(source: str, **options: str) -> list[tuple[int, str]]:
    findings = lint_source(textwrap.dedent(source), "t.py", options_from(**options))
    return [(f.line, f.code) for f in findings]


EPISODE = """\
    import asyncio
    from areal.api import AsyncRewardWrapper

    def score(c):
        return 1.0

    class W:
        def __init__(self):
            self.reward = AsyncRewardWrapper(score)

        async def helper(self):
            return 1

        async def arun_episode(self, engine, data):
            async def judge(c):
                return 1.0

    {body}
    """


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # ARL404 over ARL205, ARL403 and ARL303: a nested async def wrapped per episode.
        ("wrapped = AsyncRewardWrapper(judge)", [(18, "ARL404")]),
        # ARL403 over ARL303.
        ("wrapped = AsyncRewardWrapper(lambda c: 1.0)", [(18, "ARL403")]),
        # ARL205 over ARL201: awaiting would still only build a coroutine in the thread.
        ("asyncio.to_thread(self.helper)", [(18, "ARL205")]),
        # ARL402 over ARL201 / ARL203 / ARL202.
        ("self.reward(data)", [(18, "ARL402")]),
        ("if self.reward(data):\n            pass", [(18, "ARL402")]),
        ("r = self.reward(data)", [(18, "ARL402")]),
        # `_ = wrapper(...)` is a chosen discard: ARL201, as before the reshape.
        ("_ = self.reward(data)", [(18, "ARL201")]),
    ],
)
def test_one_finding_per_node_the_most_specific(body, expected):
    source = EPISODE.format(body=textwrap.indent(body, " " * 8))
    assert _codes(source) == expected


def test_a_builtin_blocking_code_beats_a_configured_pattern_and_offloads_are_never_configured():
    source = """\
        import asyncio
        import time

        async def step(f):
            time.sleep(1)
            await asyncio.to_thread(f)
        """
    assert _codes(source, blocking_calls="time.*,asyncio.*") == [(5, "ARL110")]


def test_one_walk_feeds_every_visitor_in_order_and_leaves_in_reverse():
    calls: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def visit_Name(self, node: cst.Name) -> None:
            calls.append(f"{self.name}+{node.value}")

        def leave_Name(self, node: cst.Name) -> None:
            calls.append(f"{self.name}-{node.value}")

    walk(cst.parse_module("x\n"), Recorder("a"), Recorder("b"), cst.CSTVisitor())
    assert calls == ["a+x", "b+x", "b-x", "a-x"]
