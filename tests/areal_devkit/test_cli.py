# SPDX-License-Identifier: Apache-2.0
"""The ``areal-devkit`` command as a user meets it: version, help, base install, project root."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from areal_devkit import __version__
from areal_devkit.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# Makes every extra's module unimportable, as on `pip install areal-devkit` (no extras); rich
# stays: cookiecutter, a base dependency, installs it.
BASE_INSTALL = (
    "import sys\n"
    "from areal_devkit.extras import extras_by_module\n"
    "for name in set(extras_by_module()) - {'rich'}: sys.modules[name] = None\n"
    "from areal_devkit.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def devkit(*args, cwd=ROOT, base_install=False, env=ENV):
    cmd = (
        [sys.executable, "-c", BASE_INSTALL]
        if base_install
        else [sys.executable, "-m", "areal_devkit"]
    )
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_version_and_every_subcommand_help_lists_examples(devkit_main):
    proc = devkit("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"areal-devkit {__version__}"
    top = devkit("--help")
    for command in COMMANDS:
        assert command in top.stdout
        sub = devkit_main(command, "--help")  # the same parser, without an interpreter each
        assert sub.returncode == 0, sub.stderr
        assert "examples:" in sub.stdout and f"areal-devkit {command}" in sub.stdout


def test_base_install_helps_and_scaffolds_and_names_the_extra(tmp_path):
    proc = devkit("--help", base_install=True)
    assert proc.returncode == 0 and "COMMAND" in proc.stdout
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    proc = devkit("new", "calc", "--package", "pkg", "--repo", str(repo), base_install=True)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "pkg" / "calc.py").is_file()
    proc = devkit("run", "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow", base_install=True)
    assert proc.returncode == 2
    assert "pip install 'areal-devkit[runtime]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_missing_module_hint_names_the_extra_that_provides_it():
    """Derived from pyproject.toml: each optional dependency's module names its own extra."""
    import tomllib

    from areal_devkit.cli import missing_extra_message
    from areal_devkit.extras import import_name

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    first_extra: dict[str, str] = {}
    for extra, requirements in extras.items():
        for requirement in requirements:
            first_extra.setdefault(import_name(requirement), extra)
    assert first_extra["matplotlib"] == "train" and first_extra["PIL"] == "runtime"
    for module, extra in first_extra.items():
        hint = missing_extra_message(ModuleNotFoundError(name=f"{module}.sub"), "train")
        assert hint == (
            f"areal-devkit train needs the {extra} extra (missing module {module!r}): "
            f"pip install 'areal-devkit[{extra}]'"
        )
    assert missing_extra_message(ModuleNotFoundError(name="my_own_module"), "run") is None


def test_a_module_the_users_code_imports_is_not_blamed_on_an_extra(tmp_path, monkeypatch):
    """AReaL's scripts import ``datasets`` (an AReaL dependency; here only the bench extra's):
    the hint names the user's file and the package, not ``areal-devkit[bench]``."""
    from areal_devkit.cli import missing_extra_message
    from areal_devkit.extras import extra_providing

    assert extra_providing("datasets") is not None  # the case that misled: an extra has it
    user_file = tmp_path / "my_flow.py"
    user_file.write_text(
        "raise ModuleNotFoundError(\"No module named 'datasets'\", name='datasets')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("my_flow")
    hint = missing_extra_message(caught.value, "run")
    assert hint == (
        f"{user_file} imports 'datasets', which is not installed in this environment: "
        "install it (pip install datasets, if its package has that name) and rerun"
    )
    # The tool's own import of it (areal_runtime, areal_devkit) still names the extra, and so
    # does the user's import of a runtime-extra module (torch: what every workflow runs on).
    own = ModuleNotFoundError(name="datasets")
    assert "areal-devkit[" in missing_extra_message(own, "run")
    user_file.write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    sys.modules.pop("my_flow", None)
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("my_flow")
    assert "pip install 'areal-devkit[runtime]'" in missing_extra_message(caught.value, "run")


def test_run_finds_the_current_directorys_packages(tmp_path, devkit_main, monkeypatch):
    """In this process: ``devkit_main`` starts sys.path as a console script's (no ``""``), so
    only the CLI's own insert of the working directory finds ``mypkg``."""
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "flow.py").write_text(
        "from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow as Flow\n"
    )
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    for name in ("mypkg", "mypkg.flow"):  # another test's mypkg must not answer for this one
        monkeypatch.delitem(sys.modules, name, raising=False)
    proc = devkit_main(
        "run", "mypkg.flow:Flow", "--limit", "2", "--engine", "scripted", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "episodes 2  accepted 2" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--show", "-1"], "--show must be >= 0"),
        (["--limit", "0"], "--limit must be >= 1"),
        (["--output", "t.csv"], "--output must end in .pt or .jsonl"),
        (["--html", "no/such/dir/p.html"], "does not exist; create it first"),
        (["--kwargs", "[1]"], "--kwargs must be a JSON object"),
    ],
)
def test_run_refuses_bad_options_before_running(args, message, devkit_main):
    workflow = "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow"
    proc = devkit_main("run", workflow, *args)
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_view_refuses_to_overwrite_its_input_and_bad_files(tmp_path, devkit_main):
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"episode": 0, "accepted": True}) + "\n")
    proc = devkit_main("view", str(data), "-o", str(data))
    assert proc.returncode == 2 and "would overwrite the trajectory file" in proc.stderr
    assert data.read_text().startswith("{")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    proc = devkit_main("view", str(bad))
    assert proc.returncode == 2 and "bad.jsonl:1: not valid JSON" in proc.stderr
    assert not (tmp_path / "bad.html").exists()
    proc = devkit_main("view", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_output_piped_into_a_reader_that_leaves_is_no_traceback(tmp_path):
    rows = [
        {"messages": [{"role": "user", "content": f"What is {i}+1?"}], "answer": str(i + 1)}
        for i in range(1500)
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cmd = [
        sys.executable,
        "-m",
        "areal_devkit",
        "run",
        "examples.arithmetic_rlvr:ArithmeticRLVRWorkflow",
    ]
    kwargs = '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}'
    proc = subprocess.Popen(
        [*cmd, "--engine", "scripted", "--data", str(data), "--kwargs", kwargs, "--table"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout.readline().startswith("episodes 1500")
    proc.stdout.close()  # like `| head -1`: the table (100 kB) no longer fits the pipe
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in err


def test_a_usage_error_is_one_line_and_exit_2(monkeypatch, capsys):
    from areal_devkit.cli import main
    from areal_devkit.commands import view
    from areal_devkit.errors import UsageError

    def refuse(args):
        raise UsageError("--flag must be sane")

    monkeypatch.setattr(view, "view", refuse)
    assert main(["view", "x.jsonl"]) == 2
    assert capsys.readouterr().err == "areal-devkit view: error: --flag must be sane\n"


@pytest.mark.parametrize("bug", [ValueError, TypeError, KeyError, FileNotFoundError])
def test_any_other_exception_keeps_its_traceback(monkeypatch, bug):
    """A bug in the tool (or the user's workflow) was a one-line exit 2 for ValueError/TypeError."""
    from areal_devkit.cli import main
    from areal_devkit.commands import view

    def broken(args):
        raise bug("a bug, not the user's input")

    monkeypatch.setattr(view, "view", broken)
    with pytest.raises(bug, match="a bug"):
        main(["view", "x.jsonl"])


def test_a_bug_in_a_command_prints_a_traceback_and_not_exit_2(tmp_path):
    script = (
        "import sys\n"
        "from areal_devkit.commands import view\n"
        "def broken(args): raise TypeError('unsupported operand')\n"
        "view.view = broken\n"
        "from areal_devkit.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "view", "x.jsonl"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "TypeError: unsupported operand" in proc.stderr


def test_a_runtime_refusal_of_the_users_input_is_a_usage_error():
    from areal_devkit.errors import UsageError, usage_errors

    with pytest.raises(UsageError, match="no module named 'nope'") as caught, usage_errors():
        raise ModuleNotFoundError("no module named 'nope'", name="nope")
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)  # the extra hint reads it
    with pytest.raises(KeyError), usage_errors():  # not a refusal of input: left alone
        raise KeyError("bug")


def test_view_of_a_folder_without_statistics_says_what_is_missing_and_how_to_get_it(
    tmp_path, devkit_main
):
    """Found: it said the (existing) folder "does not exist; write one with run --output"."""
    trial = tmp_path / "logs" / "me" / "exp" / "trial0"
    trial.mkdir(parents=True)
    proc = devkit_main("view", str(trial))
    assert proc.returncode == 2 and "does not exist" not in proc.stderr
    assert f"{trial} has no stats.jsonl (yet)" in proc.stderr
    assert "areal-devkit train --fileroot DIR" in proc.stderr and "--output t.jsonl" in proc.stderr
    (trial / "stats.jsonl").write_text("")
    proc = devkit_main("view", str(tmp_path))  # the fileroot, one level too high
    assert proc.returncode == 2 and f"view one of {trial}" in proc.stderr


def test_pages_get_the_users_normal_file_mode(tmp_path, devkit_main):
    """Found: pages were written 0600 (mkstemp's mode), unlike every other file the user makes."""
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"episode": 0, "accepted": True}) + "\n")
    before = os.umask(0o022)
    try:
        proc = devkit_main("view", str(data))
    finally:
        os.umask(before)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "t.html").stat().st_mode & 0o777 == 0o644
