# SPDX-License-Identifier: Apache-2.0
"""Every template variant, generated with ``--runtime areal`` into a copy of the real AReaL
package (its own ``areal/workflow/__init__.py`` gets the export), passes its generated tests
against real AReaL, ruff with AReaL's ruff settings, and areal-lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

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


@pytest.fixture(scope="module")
def generated_test_outcomes(areal_tree: Path) -> tuple[dict[str, list[str]], str]:
    """Every variant's generated tests in one pytest run against real AReaL, as users run
    ``pytest tests``: each outcome by its test file, and the run's output for messages. One
    run, not one per variant: each run spent ~6 s of CPU importing AReaL and torch again."""
    report = areal_tree / "generated-tests.xml"
    tests = [generated(areal_tree, variant)[1] for variant in VARIANTS]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"]
    proc = run([*cmd, f"--junitxml={report}", *tests], cwd=areal_tree)
    output = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert report.exists(), output  # pytest itself failed before it ran a test
    outcomes: dict[str, list[str]] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")[-1]  # tests.test_my_rlvr_workflow
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes.setdefault(module, []).append(kinds[0] if kinds else "passed")
    return outcomes, output


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_tests_pass_against_real_areal(
    generated_test_outcomes: tuple[dict[str, list[str]], str], variant: str
) -> None:
    outcomes, output = generated_test_outcomes
    mine = outcomes.get(f"test_my_{variant}_workflow", [])
    assert mine and set(mine) == {"passed"}, f"{variant}: {mine}\n{output}"


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
