# SPDX-License-Identifier: Apache-2.0
"""`pip install areal-devkit` with no extras, in a fresh virtualenv: light, and honest about it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_base_install_has_no_torch_and_its_commands_work(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "-c", str(ROOT / "scripts" / "constraints.txt")]
    subprocess.run([*pip, "-e", str(ROOT)], check=True, capture_output=True, timeout=600)

    def run(*args, cwd=tmp_path):
        return subprocess.run(
            [str(py), *args], capture_output=True, text=True, cwd=cwd, timeout=120
        )

    installed = run("-m", "pip", "list", "--format=freeze").stdout.lower()
    for heavy in ("torch", "transformers", "numpy", "openai"):
        assert f"\n{heavy}==" not in "\n" + installed, f"the base install pulled {heavy}"
    assert run("-m", "areal_devkit", "--help").returncode == 0
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    made = run("-m", "areal_devkit", "new", "calc", "--package", "pkg", cwd=repo)
    assert made.returncode == 0, made.stderr
    lint = run("-m", "areal_lint.cli", "pkg", cwd=repo)
    assert lint.returncode == 0, lint.stdout
    flake8 = run("-m", "flake8", "--select=ARL", "pkg", cwd=repo)
    assert flake8.returncode == 0, flake8.stdout + flake8.stderr
    needs = run("-m", "areal_devkit", "run", "pkg.calc:CalcWorkflow", cwd=repo)
    assert needs.returncode == 2 and "pip install 'areal-devkit[runtime]'" in needs.stderr
    assert "Traceback" not in needs.stderr
