# SPDX-License-Identifier: Apache-2.0
"""The CLI's one door into the runtime: complete, lazy, and the only one used."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from areal_devkit import runtime_facade

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "areal_devkit"


def runtime_imports(path: Path) -> list[str]:
    """``file:line module`` for each import of areal_runtime in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [
            f"{path}:{node.lineno} {m}" for m in modules if m.split(".")[0] == "areal_runtime"
        ]
    return found


def test_the_cli_imports_the_runtime_only_through_the_facade():
    sources = [
        p
        for p in PACKAGE.rglob("*.py")
        if p.name != "runtime_facade.py" and "template" not in p.relative_to(PACKAGE).parts
    ]
    assert len(sources) > 20  # the walk found the package
    assert [hit for p in sources for hit in runtime_imports(p)] == []
    assert runtime_imports(PACKAGE / "runtime_facade.py") == []  # names in a table, not imports


@pytest.mark.parametrize("name", sorted(runtime_facade.EXPORTS))
def test_every_export_is_the_runtime_modules_own_object(name):
    module = importlib.import_module(runtime_facade.EXPORTS[name])
    assert getattr(runtime_facade, name) is getattr(module, name)
    assert name in dir(runtime_facade)


def test_a_name_patched_in_its_runtime_module_is_what_the_cli_gets(monkeypatch):
    from areal_runtime.infra import workflow_resolution

    assert runtime_facade.load_object is workflow_resolution.load_object  # used once already
    monkeypatch.setattr(workflow_resolution, "load_object", lambda spec: spec)
    assert runtime_facade.load_object("x") == "x"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        runtime_facade.nope  # noqa: B018


def test_importing_the_cli_loads_no_heavy_runtime_module():
    """``--help`` on the base install needs the facade to import nothing until a name is used."""
    code = (
        "import sys\n"
        "from areal_devkit.cli import build_parser\n"
        "build_parser()\n"
        "heavy = [m for m in ('torch', 'transformers', 'omegaconf', 'hydra') if m in sys.modules]\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('areal_runtime.'))\n"
        "print(heavy, loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    heavy, loaded = out.stdout.strip().split("] [")
    assert heavy == "["
    # ENGINE_SPECS, the --engine help text, is the one name the parsers read
    assert "areal_runtime.engine.factory" in loaded and "areal_runtime.trainer" not in loaded
