# SPDX-License-Identifier: Apache-2.0
"""[tool.areal-lint] in pyproject.toml, --version, --statistics, github and SARIF output."""

import json
import subprocess
import sys

import pytest

from areal_lint import __version__
from areal_lint.cli import build_parser, main

BAD = "import time\n\nimport mylib\n\n\nasync def f():\n    time.sleep(1)\n    open('x')\n    mylib.fetch()\n"


def _project(tmp_path, section):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n\n" + section)
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text(BAD)
    (pkg / "b.py").write_text(BAD)
    return pkg


def test_pyproject_is_found_walking_up_and_the_command_line_wins(tmp_path, capsys):
    pkg = _project(
        tmp_path,
        "[tool.areal-lint]\n"
        'ignore = ["ARL101"]\n'
        'arl-blocking-calls = ["mylib.fetch->mylib.afetch"]\n'
        "[tool.areal-lint.per-file-ignores]\n"
        '"pkg/sub/b.py" = ["ARL110"]\n',
    )
    assert main([str(pkg), "--format", "json"]) == 1
    found = {(f["path"].rsplit("/", 1)[-1], f["code"]) for f in json.loads(capsys.readouterr().out)}
    assert found == {("a.py", "ARL110"), ("a.py", "ARL190"), ("b.py", "ARL190")}
    # flags replace the configuration's values
    assert main([str(pkg), "--ignore", "ARL110,ARL190", "--format", "json"]) == 1
    found = {(f["path"].rsplit("/", 1)[-1], f["code"]) for f in json.loads(capsys.readouterr().out)}
    assert found == {("a.py", "ARL101"), ("b.py", "ARL101")}
    assert main([str(pkg), "--config", "none", "--select", "ARL190"]) == 0


def test_a_pyproject_without_the_section_is_passed_over_and_bad_keys_exit_2(tmp_path, capsys):
    pkg = _project(tmp_path, '[tool.areal-lint]\nselect = "ARL2"\n')
    inner = tmp_path / "pkg" / "pyproject.toml"
    inner.write_text("[tool.ruff]\nline-length = 100\n")
    assert main([str(pkg)]) == 0  # the outer section's select applies
    (tmp_path / "pyproject.toml").write_text("[tool.areal-lint]\nselekt = 'ARL1'\n")
    assert main([str(pkg)]) == 2
    assert "unknown [tool.areal-lint] key(s): selekt" in capsys.readouterr().err


def test_version_statistics_and_help_for_every_option(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"areal-lint {__version__}"
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    assert main([str(bad), "--statistics"]) == 1
    out = capsys.readouterr().out
    assert "    1  ARL110  ``time.sleep`` in async code" in out
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings or action.dest} has no help text"


def test_github_annotations(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    assert main([str(bad), "--format", "github"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(
        f"::error file={bad},line=7,col=5,endLine=7,endColumn=18,title=ARL110::"
    )
    assert first.endswith("ARL110 time.sleep() blocks the event loop; use await asyncio.sleep(...)")


def test_sarif_is_valid_2_1_0(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    assert main([str(bad), "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["ARL101", "ARL110"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    jsonschema = pytest.importorskip("jsonschema")
    schema = {  # the parts of the 2.1.0 schema a consumer relies on, checked where offline
        "type": "object",
        "required": ["version", "runs"],
        "properties": {
            "runs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["tool"],
                    "properties": {
                        "tool": {"required": ["driver"]},
                        "results": {
                            "type": "array",
                            "items": {
                                "required": ["message"],
                                "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}
                                },
                            },
                        },
                    },
                },
            }
        },
    }
    jsonschema.validate(log, schema)


def test_a_file_without_async_def_does_not_import_libcst(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("import os\n\n\ndef f():\n    return os.getcwd()\n")
    code = (
        "import sys\nfrom areal_lint.cli import main\n"
        f"rc = main([{str(clean)!r}])\n"
        "assert 'libcst' not in sys.modules, 'libcst imported'\nsys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _parse(fmt, out):
    """Read stdout as the format's consumer would; fails on anything else in it."""
    if fmt == "json":
        return [(f["line"], f["code"]) for f in json.loads(out)]
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        return [
            (r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"])
            for r in results
        ]
    lines = out.splitlines()
    assert all(line.startswith("::error file=") for line in lines), out
    return [
        (int(line.split(",line=")[1].split(",")[0]), line.split("title=")[1].split("::")[0])
        for line in lines
    ]


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
@pytest.mark.parametrize(
    "flags", [["--statistics"], ["--diff"], ["--statistics", "--diff", "--unsafe-fixes"]]
)
def test_machine_formats_stay_parseable_with_every_other_flag(tmp_path, capsys, fmt, flags):
    """Statistics and diffs go to stderr with a machine format: stdout is that format alone."""
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    assert main([str(bad), "--config", "none", "--format", fmt, *flags]) == 1
    captured = capsys.readouterr()
    assert sorted(_parse(fmt, captured.out)) == [(7, "ARL110"), (8, "ARL101")]
    if "--statistics" in flags:
        assert "    1  ARL110" in captured.err
    if "--unsafe-fixes" in flags:
        assert "+    await asyncio.sleep(1)" in captured.err
