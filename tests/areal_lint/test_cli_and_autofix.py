# SPDX-License-Identifier: Apache-2.0
"""The areal-lint CLI, autofix snapshots and idempotency, and the generated rules page."""

import json
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from areal_lint.autofix import fix_source
from areal_lint.cli import main
from areal_lint.docs_gen import render
from areal_lint.runner import lint_source

ROOT = Path(__file__).resolve().parents[2]
AUTOFIX = ROOT / "tests" / "areal_lint" / "eval_files" / "autofix"
BAD = "import time\n\nasync def f():\n    time.sleep(1)\n    open('x')  # noqa: ARL101\n"


def autofix_examples() -> list[Path]:
    """The example files; each fixable rule is marked (``# ARLnnn``) in at least one.

    Checked here so that the snapshot and idempotence tests cannot pass on an empty folder.
    """
    from areal_lint.rules import ALL_RULES

    paths = sorted(AUTOFIX.glob("*.py"))
    marked = {code for p in paths for code in re.findall(r"# (ARL\d{3})", p.read_text())}
    assert marked == {rule.code for rule in ALL_RULES if rule.fix is not None}, AUTOFIX
    snapshots = {p.name.removesuffix(".expected") for p in AUTOFIX.glob("*.py.expected")}
    assert snapshots == {p.name for p in paths}, "every example has a snapshot and vice versa"
    return paths


def test_autofix_snapshot(request):
    for path in autofix_examples():
        fixed, findings = fix_source(path.read_text(), unsafe=True)
        snapshot = path.with_suffix(".py.expected")
        if request.config.getoption("--generate-autofix"):
            snapshot.write_text(fixed)
        assert fixed == snapshot.read_text()
        marked = set(re.findall(r"# (ARL\d{3})", path.read_text()))
        assert {f.code for f in findings} == marked, path.name


def test_fixes_are_idempotent_parse_and_remove_the_finding():
    for path in autofix_examples():
        once, fixed = fix_source(path.read_text(), unsafe=True)
        assert fixed and once != path.read_text(), path.name  # the example has something to fix
        twice, again = fix_source(once, unsafe=True)
        assert twice == once and again == []
        cst.parse_module(once)
        assert not [f for f in lint_source(once) if f.rewrite is not None]


def test_unsafe_fixes_need_the_flag():
    safe_only, fixed = fix_source(BAD)
    assert safe_only == BAD and fixed == []
    unsafe, fixed = fix_source(BAD, unsafe=True)
    assert "await asyncio.sleep(1)" in unsafe and unsafe.startswith("import asyncio\n")


def test_cli_text_json_noqa_and_exit_codes(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    good = tmp_path / "good.py"
    good.write_text("import asyncio\n\nasync def f():\n    await asyncio.sleep(1)\n")
    assert main([str(good)]) == 0
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:4:5: ARL110 time.sleep() blocks the event loop" in out
    assert "ARL101" not in out  # silenced by noqa
    assert main([str(bad), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data[0]["code"] == "ARL110" and data[0]["line"] == 4 and data[0]["fix"] == "unsafe"
    assert main([str(bad), "--ignore", "ARL110"]) == 0
    assert main([str(bad), "--select", "ARL2"]) == 0
    assert main([str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([str(bad), "--fix", "--diff"])
    assert exc.value.code == 2


def test_cli_diff_writes_nothing_and_fix_writes(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    assert main([str(bad), "--diff", "--unsafe-fixes"]) == 1
    assert "+    await asyncio.sleep(1)" in capsys.readouterr().out
    assert bad.read_text() == BAD
    assert main([str(bad), "--fix", "--unsafe-fixes"]) == 0
    assert "await asyncio.sleep(1)" in bad.read_text()
    assert not list(tmp_path.glob(".*.tmp"))


def test_fix_keeps_the_files_permission_bits(tmp_path):
    """The temporary file the fix is written to is 0600; the fixed file must keep its mode."""
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    bad.chmod(0o755)
    assert main([str(bad), "--fix", "--unsafe-fixes", "--no-cache"]) == 0
    assert "await asyncio.sleep(1)" in bad.read_text()
    assert bad.stat().st_mode & 0o777 == 0o755


def test_parallel_output_equals_serial(tmp_path, capsys):
    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text(BAD if i % 3 == 0 else "x = 1\n")
    main([str(tmp_path), "--jobs", "1", "--no-cache"])
    serial = capsys.readouterr().out
    main([str(tmp_path), "--jobs", "2", "--no-cache"])  # no cache: the workers lint every file
    assert capsys.readouterr().out == serial and serial.count("ARL110") == 14


def test_a_few_files_worth_parsing_are_linted_without_workers(tmp_path, capsys, monkeypatch):
    """Workers pay for themselves from PARALLEL_MIN_PARSED files to parse, not files named."""
    import concurrent.futures

    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text(BAD if i < 3 else "x = 1\n")

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool for 3 files to parse")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    assert main([str(tmp_path), "--jobs", "2", "--no-cache"]) == 1
    assert capsys.readouterr().out.count("ARL110") == 3


def test_rules_page_is_up_to_date():
    assert (ROOT / "docs" / "lint_rules.md").read_text() == render()


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_console_script_and_repo_code_are_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "areal_lint.cli", "--exclude", "eval_files,stall_corpus", "."],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_fix_whose_output_would_not_parse_is_dropped(monkeypatch):
    import libcst as cst

    from areal_lint.rules import blocking

    monkeypatch.setattr(blocking, "_to_asyncio_sleep", lambda node: cst.Name("import"))
    fixed, findings = fix_source(BAD, unsafe=True)
    assert fixed == BAD and findings == []


def test_an_internal_error_is_a_finding_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    import areal_lint.cli as cli

    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(BAD)
    real = cli.lint_source

    def flaky(source, filename, options):
        if filename.endswith("a.py"):
            raise RuntimeError("boom")
        return real(source, filename, options)

    monkeypatch.setattr(cli, "lint_source", flaky)
    assert main([str(tmp_path), "--fix", "--unsafe-fixes", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "a.py:1:1: ARL000 areal-lint failed on this file (RuntimeError: boom)" in out
    assert "left unchanged" in out and (tmp_path / "a.py").read_text() == BAD
    assert (tmp_path / "b.py").read_text().count("await asyncio.sleep(1)") == 1


def test_exclude_takes_globs_and_virtualenvs_are_never_walked(tmp_path, capsys):
    for rel in ["pkg/a.py", "pkg/gen_b.py", "fixtures/c.py", "env/lib/d.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(BAD)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    assert main([str(tmp_path), "--exclude", "gen_*.py,*/fixtures", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "a.py" in out
    assert not any(name in out for name in ("gen_b.py", "c.py", "d.py"))
