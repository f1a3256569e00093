# SPDX-License-Identifier: Apache-2.0
"""``ConsistencyChecker``: what the ``consistency_check`` pytest fixture hands a test.

One line in a workflow's test runs the whole consistency check on the local engine and fails
the test with the readable report, so the bugs are caught where the workflow is written.
"""

from __future__ import annotations

import asyncio
from typing import Any

from areal_runtime.consistency import ConsistencyReport, acheck_workflow


class ConsistencyChecker:
    """``checker(workflow, rows)`` asserts consistency; ``checker.report(...)`` only reports."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def __call__(self, workflow: Any, rows: Any, **kwargs: Any) -> ConsistencyReport:
        """Run and check; AssertionError with the report when any episode fails."""
        report = self.report(workflow, rows, **kwargs)
        report.assert_ok()
        return report

    def report(self, workflow: Any, rows: Any, **kwargs: Any) -> ConsistencyReport:
        """Run and check without asserting (for tests that expect a failure)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.areport(workflow, rows, **kwargs))
        raise RuntimeError(
            "consistency_check runs its own event loop: call it from a plain `def test_...`, "
            "or use `await consistency_check.arun(...)` in an async test"
        )

    async def arun(self, workflow: Any, rows: Any, **kwargs: Any) -> ConsistencyReport:
        """``await``-able form of ``__call__`` for async tests."""
        report = await self.areport(workflow, rows, **kwargs)
        report.assert_ok()
        return report

    async def areport(self, workflow: Any, rows: Any, **kwargs: Any) -> ConsistencyReport:
        rows = [rows] if isinstance(rows, dict) else list(rows)
        kwargs.setdefault("engine", self.engine)
        engine = kwargs.pop("engine")
        return await acheck_workflow(workflow, rows, engine, **kwargs)
