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
