# SPDX-License-Identifier: Apache-2.0
"""libcst imported with its dataclass methods compiled on an earlier run (libcst_import.py).

Each case runs in a fresh interpreter: libcst is already imported in this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

# Imports libcst through the table at argv[1], then prints how many texts it compiled, whether
# dataclasses was left as it was, and what linting a workflow finds with the classes it built.
PROBE = """
import dataclasses, json, sys
from pathlib import Path
from areal_lint import libcst_import

compiled = []
def counting_compile(*args, **kwargs):
    compiled.append(1)
    return compile(*args, **kwargs)
libcst_import.compile = counting_compile

cst = libcst_import.import_libcst(Path(sys.argv[1]))
from areal_lint.runner import lint_source
source = '''
import time
class W:
    async def arun_episode(self, engine, data):
        time.sleep(1)
        with open("log.txt") as f:
            return f.read()
'''
module = cst.parse_module(source)
print(json.dumps({
    "compiled": len(compiled),
    "patched": hasattr(dataclasses, "exec"),
    "round_trip": module.code == source,
    "equal_nodes": cst.parse_module(source).deep_equals(module),
    "findings": [(f.line, f.code) for f in lint_source(source, "w.py")],
}))
"""


def _probe(table: Path, *, write_bytecode: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(table)], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_second_import_compiles_nothing_and_builds_the_same_classes(tmp_path):
    table = tmp_path / "table.bin"
    first = _probe(table)
    assert first["compiled"] > 300  # libcst's ~200 node classes, several methods each
    assert table.read_bytes().startswith(MAGIC_NUMBER)
    written = table.stat().st_mtime_ns
    second = _probe(table)
    assert second["compiled"] == 0
    assert table.stat().st_mtime_ns == written  # nothing new: not rewritten
    for run in (first, second):
        assert not run["patched"]
        assert run["round_trip"] and run["equal_nodes"]
    assert second["findings"] == first["findings"]
    assert {code for _, code in first["findings"]} == {"ARL101", "ARL110"}


@pytest.mark.parametrize(
    "content",
    [b"not a table", MAGIC_NUMBER + b"\x00garbage", b"\x00\x00\r\n" + b"x" * 64],
    ids=["garbage", "bad marshal", "another interpreter's magic"],
)
def test_an_unreadable_table_costs_the_compile_and_is_replaced(tmp_path, content):
    table = tmp_path / "table.bin"
    table.write_bytes(content)
    run = _probe(table)
    assert run["compiled"] > 300 and run["round_trip"]
    assert _probe(table)["compiled"] == 0


def test_no_table_is_written_when_python_writes_no_byte_code(tmp_path):
    table = tmp_path / "table.bin"
    assert _probe(table, write_bytecode=False)["compiled"] > 300
    assert not table.exists()


def test_a_table_that_cannot_be_written_is_skipped(tmp_path):
    """As on a read-only install: the folder for the table cannot be made."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder would be")
    run = _probe(blocker / "table.bin")
    assert run["compiled"] > 300 and run["round_trip"]
    assert blocker.read_text() == "a file where the folder would be"
