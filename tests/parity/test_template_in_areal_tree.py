# SPDX-License-Identifier: Apache-2.0
"""Every template variant, generated with ``--runtime areal`` into a copy of the real AReaL
package (its own ``areal/workflow/__init__.py`` gets the export), passes its generated tests
against real AReaL, ruff with AReaL's ruff settings, and areal-lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import areal
import pytest

from areal_devkit.scaffold.variants import VARIANTS

BIN = Path(sys.executable).parent

# AReaL's ruff settings (its pyproject.toml, [tool.ruff]); not shipped in the wheel.
AREAL_RUFF_TOML = """\
line-length = 88
target-version = "py311"
[lint]
select = ["E", "W", "F", "I", "UP"]
ignore = ["E501"]
[lint.isort]
section-order = ["future", "standard-library", "third-party", "first-party", "areal", "local-folder"]
[lint.isort.sections]
"areal" = ["areal"]
"""


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def areal_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout-shaped copy of the installed AReaL with one workflow per variant added."""
    repo = tmp_path_factory.mktemp("areal-checkout")
    source = Path(areal.__file__).parent
    shutil.copytree(source, repo / "areal", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "ruff.toml").write_text(AREAL_RUFF_TOML)
    for variant in VARIANTS:
        cmd = [sys.executable, "-m", "areal_devkit", "new", f"my_{variant}", "--variant", variant]
        cmd += ["--package", "areal.workflow", "--repo", str(repo), "--runtime", "areal"]
        proc = run(cmd, cwd=repo)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo


def generated(repo: Path, variant: str) -> list[str]:
    return [f"areal/workflow/my_{variant}.py", f"tests/test_my_{variant}_workflow.py"]


def test_exports_land_in_areals_own_lazy_init(areal_tree: Path) -> None:
    init = (areal_tree / "areal/workflow/__init__.py").read_text()
    original = (Path(areal.__file__).parent / "workflow/__init__.py").read_text()
    assert init != original and '"RLVRWorkflow": "areal.workflow.rlvr"' in init
    for variant in VARIANTS:
        assert f'"areal.workflow.my_{variant}"' in init


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_tests_pass_against_real_areal(areal_tree: Path, variant: str) -> None:
    proc = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            generated(areal_tree, variant)[1],
        ],
        cwd=areal_tree,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_files_are_clean_under_areals_ruff_settings(
    areal_tree: Path, variant: str
) -> None:
    files = generated(areal_tree, variant)
    for cmd in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        proc = run([str(BIN / "ruff"), *cmd, *files], cwd=areal_tree)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_files_are_clean_under_areal_lint(areal_tree: Path, variant: str) -> None:
    proc = run([str(BIN / "areal-lint"), *generated(areal_tree, variant)], cwd=areal_tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
