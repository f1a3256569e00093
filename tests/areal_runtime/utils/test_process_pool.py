# SPDX-License-Identifier: Apache-2.0
"""Worker processes import what the caller can import now, not only what it could at start."""

import pickle
import sys

import pytest

from areal_runtime.utils.process_pool import Job, WorkerPool


@pytest.mark.asyncio
async def test_a_module_folder_added_after_the_workers_started_imports_in_them(tmp_path):
    pool = WorkerPool(1, name="test-late-path")
    try:
        assert await pool.run(Job(pickle.dumps(len), pickle.dumps((["a"], {})), 30)) == (True, 1)
        (tmp_path / "late_module_for_pool.py").write_text("def triple(x):\n    return 3 * x\n")
        sys.path.insert(0, str(tmp_path))  # after the worker started
        try:
            import late_module_for_pool

            job = Job(pickle.dumps(late_module_for_pool.triple), pickle.dumps(((2,), {})), 30)
            assert await pool.run(job) == (True, 6)
            assert await pool.run(job) == (True, 6)  # the worker keeps it once loaded
        finally:
            sys.path.remove(str(tmp_path))
            sys.modules.pop("late_module_for_pool", None)
    finally:
        pool.shutdown()
