# SPDX-License-Identifier: Apache-2.0
import atexit
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# tests/parity imports the real AReaL next to areal_runtime; it runs under .venv-areal
# (`make parity`). Where `areal` is not installed (the main .venv) it is not collected at all,
# rather than collected and skipped, so a skip can never hide a parity failure.
collect_ignore = [] if importlib.util.find_spec("areal") is not None else ["parity"]
# tests/camel needs camel-ai, which pins an older pydantic: it runs under .venv-camel only.
if importlib.util.find_spec("camel") is None:
    collect_ignore.append("camel")


# Every Claude Code CLI the tests start (the SDK passes this environment on) keeps its state in a
# folder of this run, not in the user's ~/.claude, and never tries to update or check its
# installation: parallel runs and a developer's own Claude Code must not meet.
# The folder is removed when the process that made it exits (each left ~0.7 MB behind before:
# 468 of them were found in /tmp after a few days of test runs).
if "CLAUDE_CONFIG_DIR" not in os.environ:
    os.environ["CLAUDE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="areal-devkit-claude-")
    atexit.register(shutil.rmtree, os.environ["CLAUDE_CONFIG_DIR"], True)
os.environ.setdefault("DISABLE_AUTOUPDATER", "1")
os.environ.setdefault("DISABLE_INSTALLATION_CHECKS", "1")

# cookiecutter keeps the last run's answers in the user's replay folder, which `new --replay`
# reads back: each test process (each xdist worker, not only the controller whose environment
# the workers inherit) gets a folder of its own, so that no test replays another's answers.
_own_config = os.environ.get("AREAL_DEVKIT_TEST_COOKIECUTTER_CONFIG")
if os.environ.get("COOKIECUTTER_CONFIG", _own_config) == _own_config:
    _folder = tempfile.mkdtemp(prefix="areal-devkit-cookiecutter-")
    _config = Path(_folder, "config.yaml")
    _config.write_text(f"replay_dir: {Path(_folder, 'replay')}\n")
    os.environ["COOKIECUTTER_CONFIG"] = os.environ["AREAL_DEVKIT_TEST_COOKIECUTTER_CONFIG"] = str(
        _config
    )
    atexit.register(shutil.rmtree, _folder, True)


def pytest_addoption(parser):
    parser.addoption("--generate-autofix", action="store_true", help="rewrite autofix snapshots")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the groups into node ids
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``), the tests of a module
    with a module-scoped fixture (a baked project, a loaded model, a started browser) run on one
    worker, so that fixture is built once rather than once per worker."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        if defs is None:
            continue
        if any(chain and chain[-1].scope == "module" for chain in defs.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def pytest_configure(config):
    """pytest 9.2 reads a node's id from ``Node._id`` and pytest-xdist 3.8 writes a test's group
    into ``Node._nodeid``: the groups are lost, a module's fixture is built on both workers, and
    nothing says so. Refuse that pair with the fix instead of running on."""
    if getattr(config.option, "dist", "no") != "loadgroup" or hasattr(config, "workerinput"):
        return
    from importlib.metadata import version

    from packaging.version import Version

    xdist = version("pytest-xdist")
    if Version(pytest.__version__) >= Version("9.2") and Version(xdist) < Version("3.9"):
        raise pytest.UsageError(
            f"--dist loadgroup does not work with pytest {pytest.__version__} and pytest-xdist "
            f"{xdist} (the groups never reach the workers): install the pins of "
            "scripts/constraints.txt (pytest<9.2)"
        )


@pytest.fixture
def devkit_main(capsys, monkeypatch) -> Callable[..., subprocess.CompletedProcess]:
    """``areal-devkit ARGS`` as ``main(ARGS)`` in this process, returning what the subprocess
    would (exit status, stdout, stderr). Why: a subprocess imports torch, transformers and the
    agent SDKs again and reloads the model each time, seconds of CPU per call; tests of what a
    command prints or returns need none of that. sys.path starts as a console script's would
    (no ``""``, so the CLI's own insert of the working directory is what finds the user's
    packages) and is put back afterwards, as are the working directory and sys.argv. The
    subprocess path stays covered by tests/areal_devkit/test_cli.py and the signal and serve
    tests."""
    from areal_devkit.cli import main

    def call(*args: str, cwd: str | Path = ROOT) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p != ""])
        monkeypatch.setattr(sys, "argv", ["areal-devkit", *args])
        capsys.readouterr()  # only this call's output
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, or a usage error it found itself
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)  # as the interpreter does on its way out
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)

    return call
