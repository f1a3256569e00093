# SPDX-License-Identifier: Apache-2.0
"""Eval files in the flake8-async style: the comments are the expected findings."""

import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest
from flake8.main.cli import main as flake8_main

from areal_lint.rules import ALL_RULES
from areal_lint.runner import lint_source

from .harness import (
    eval_files,
    expected,
    expected_messages,
    flake8_args,
    options_for,
    render,
    selected_codes,
    strip_expectations,
)

FILES = eval_files()


def findings_for(path, source):
    """The file's findings, limited to the codes it checks (its family unless it says)."""
    codes = selected_codes(path, source)
    return [
        f for f in lint_source(source, str(path), options_for(source)) if f.code.startswith(codes)
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_findings_and_messages_match_the_comments_exactly(path):
    """Line, code and the fully rendered message: every rule's message text is covered."""
    source = path.read_text()
    got = Counter((f.line, f.code, f.message) for f in findings_for(path, source))
    want = expected_messages(source)
    assert not want - got, f"missing findings: {sorted(want - got)}"
    assert not got - want, f"unexpected findings: {sorted(got - want)}"


def run_flake8(path, select, extra=()):
    """flake8 in this process, its plugin found by entry point as on the command line (the
    console script itself runs in test_flake8_config_extend_ignore_... and the template tests)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        code = flake8_main(
            [
                f"--select={','.join(select)}",
                "--format=%(row)d:%(code)s:%(text)s",
                f"--output-file={report}",
                *extra,
                str(path),
            ]
        )
        assert code in (0, 1)
        lines = report.read_text().splitlines() if report.exists() else []
    return {(int(row), code, text) for row, code, text in (line.split(":", 2) for line in lines)}


@pytest.mark.parametrize(
    "path", [p for p in FILES if expected(p.read_text())], ids=lambda p: p.name
)
def test_flake8_plugin_reports_the_same_and_honours_noqa(path, tmp_path):
    source = path.read_text()
    select = selected_codes(path, source)
    want = {(line, code, message) for line, code, message in expected_messages(source)}
    assert run_flake8(path, select, flake8_args(source)) == want
    silenced = []
    for line in source.splitlines():
        bare, codes = strip_expectations(line)
        silenced.append(bare + f"# noqa: {', '.join(codes)}" if codes else line)
    copy = tmp_path / path.name
    copy.write_text("\n".join(silenced) + "\n")
    assert run_flake8(copy, select, flake8_args(source)) == set()


def to_sync(source: str) -> str:
    source = re.sub(r"\basync (def|with|for)\b", r"\1", source)
    return re.sub(r"\bawait ", "", source)


@pytest.mark.parametrize(
    "path", [p for p in FILES if re.match(r"arl[123]", p.name)], ids=lambda p: p.name
)
def test_the_same_code_made_sync_is_silent(path):
    source = to_sync(path.read_text())
    findings = [f for f in lint_source(source, str(path), options_for(source)) if f.code < "ARL4"]
    assert findings == []


def test_every_rule_is_documented_tested_and_has_a_one_line_message():
    covered = {code for p in FILES for _, code in expected(p.read_text())}
    for rule in ALL_RULES:
        doc = rule.__doc__ or ""
        for section in ("What:", "Why:", "Example:", "Fix:"):
            assert section in doc, f"{rule.code} docstring lacks {section}"
        assert rule.code in covered, f"{rule.code} has no eval-file case (and so no message check)"
        assert "\n" not in rule.message


def test_an_expectation_comment_gives_every_message_argument():
    assert render("ARL101", "open") == (
        "open() blocks the event loop; use aiofiles.open or await asyncio.to_thread(...)"
    )
    assert "load_prompt, data" in render(
        "ARL140", 'load_prompt, asyncio.to_thread(load_prompt, data["path"])'
    )
    with pytest.raises(ValueError, match="takes 2 argument"):
        render("ARL140", "load_prompt")
    with pytest.raises(ValueError, match="takes 0 argument"):
        render("ARL110", "time.sleep")
    two = expected_messages("x  # ARL110  # ARL303\n")
    assert sorted(code for _, code, _ in two) == ["ARL110", "ARL303"]
    assert strip_expectations("x  # ARL101: open  # ARL203: y") == ("x  ", ["ARL101", "ARL203"])


def test_syntax_error_is_one_arl000_finding():
    findings = lint_source("async def f(:\n    pass\n", "bad.py")
    assert [f.code for f in findings] == ["ARL000"]
    assert "could not parse bad.py" in findings[0].message and findings[0].line == 2


def test_files_without_async_are_not_parsed(monkeypatch):
    monkeypatch.setattr(cst, "parse_module", lambda *a: pytest.fail("parsed a file with no async"))
    assert lint_source("import time\ntime.sleep(1)\n") == []


def test_flake8_config_extend_ignore_per_file_ignores_and_arl_options(tmp_path):
    source = (
        "import time\n\nimport mylib\n\n\n"
        "async def step():\n"
        "    time.sleep(1)\n"
        "    open('x')\n"
        "    mylib.fetch()\n"
    )
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(source)
    (tmp_path / ".flake8").write_text(
        "[flake8]\n"
        "extend-ignore = ARL101\n"
        "per-file-ignores =\n    b.py: ARL110\n"
        "arl-blocking-calls = mylib.fetch->mylib.afetch\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=ARL", "--format=%(path)s:%(row)d:%(code)s %(text)s"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [
        "./a.py:7:ARL110 time.sleep() blocks the event loop; use await asyncio.sleep(...)",
        "./a.py:9:ARL190 mylib.fetch() is configured as blocking; use mylib.afetch",
        "./b.py:9:ARL190 mylib.fetch() is configured as blocking; use mylib.afetch",
    ]
