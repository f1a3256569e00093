# SPDX-License-Identifier: Apache-2.0
"""`make demo`'s set-up installs single packages of pyproject.toml's extras, with their bounds.

scripts/bootstrap.sh names them as EXTRA:NAME; a package renamed or moved to another extra must
fail here, not on a newcomer's fresh machine.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "extra_requirements", ROOT / "scripts" / "extra_requirements.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def optional_dependencies() -> dict[str, list[str]]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["project"]["optional-dependencies"]


def demo_items() -> list[str]:
    """The EXTRA:NAME items of bootstrap.sh's demo set."""
    text = (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")
    match = re.search(r"^\s*demo\).*extra_reqs=\(([^)]*)\)", text, flags=re.M)
    assert match, "bootstrap.sh has no demo set with extra_reqs=(...)"
    return match.group(1).split()


def test_demo_set_resolves_to_the_extras_own_requirements():
    script = load_script()
    extras = optional_dependencies()
    items = demo_items()
    # the tool agent's SDK, the quick start agent's SDK, the generated tests' runner
    assert {"agents:anthropic", "agents:openai-agents", "dev:pytest"} <= set(items)
    picked = script.pick(extras, items)
    for item, requirement in zip(items, picked, strict=True):
        extra = item.split(":")[0]
        assert requirement in extras[extra]
        assert script.requirement_name(requirement) == item.split(":")[1]


def test_requirement_names_are_normalised():
    script = load_script()
    assert script.requirement_name("pytest_asyncio>=0.24") == "pytest-asyncio"
    assert script.requirement_name("Claude.Agent-SDK>=0.2") == "claude-agent-sdk"
    extras = {"dev": ["pytest>=8.0", "pytest-asyncio>=0.24  # a comment"]}
    assert script.pick(extras, ["dev:pytest_asyncio"]) == ["pytest-asyncio>=0.24"]


@pytest.mark.parametrize("item", ["agents:nope", "nope:pytest", "pytest"])
def test_unknown_items_fail_with_exit_2(item, capsys):
    script = load_script()
    assert script.main([item]) == 2
    assert item in capsys.readouterr().err


def test_deps_lists_the_base_dependencies_and_whole_extras(capsys):
    """The set-up scripts install these first and the project itself with --no-deps: nothing
    the one-step ``pip install -e .[extras]`` would have installed may be missing."""
    script = load_script()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert script.main(["--deps", "runtime,dev"]) == 0
    printed = capsys.readouterr().out.splitlines()
    wanted = project["dependencies"] + project["optional-dependencies"]["runtime"]
    wanted += project["optional-dependencies"]["dev"]
    assert printed == [r.split("#")[0].strip() for r in wanted]
    assert all("#" not in line and line for line in printed)
    assert script.main(["--deps", "runtime,nope"]) == 2
    assert "'nope': not an extra" in capsys.readouterr().err


def test_one_at_a_time_holds_its_lock_while_the_command_runs(tmp_path):
    import fcntl
    import subprocess
    import sys

    lock = tmp_path / "setup.lock"
    probe = (
        "import fcntl, sys\n"
        "f = open(sys.argv[1])\n"
        "try:\n    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n    sys.exit(7)\n"
    )
    helper = ROOT / "scripts" / "one_at_a_time.py"
    cmd = [sys.executable, str(helper), str(lock), sys.executable, "-c", probe, str(lock)]
    assert subprocess.call(cmd, timeout=60) == 7  # held: the probe could not take it
    with open(lock) as f:  # released once the command ended
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert subprocess.call([sys.executable, str(helper)], timeout=60) == 2
