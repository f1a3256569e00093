# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit new`` renders in its own process: the same bytes as plain cookiecutter, and a
conflict is refused before anything is written."""

import shutil
from pathlib import Path

import pytest
from cookiecutter.main import cookiecutter

from areal_devkit.cli import main
from areal_devkit.scaffold.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "examples" / "seed_projects" / "lazy_project"


@pytest.fixture(autouse=True)
def own_replay_dir(tmp_path, monkeypatch):
    """Both tools save their answers in the user's replay folder: use one of this test's."""
    (tmp_path / "cc.yaml").write_text(f"replay_dir: {tmp_path / 'replay'}\n")
    monkeypatch.setenv("COOKIECUTTER_CONFIG", str(tmp_path / "cc.yaml"))


def snapshot(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.slow
def test_new_writes_the_bytes_plain_cookiecutter_writes(tmp_path, capsys):
    by_new, by_cookiecutter = tmp_path / "new", tmp_path / "cookiecutter"
    for repo in (by_new, by_cookiecutter):
        shutil.copytree(SEED, repo)
    for variant in VARIANTS:
        answers = {
            "workflow_name": f"w_{variant}",
            "variant": variant,
            "package": "myproj.workflow",
        }
        argv = ["new", answers["workflow_name"], "--variant", variant]
        assert main([*argv, "--package", answers["package"], "--repo", str(by_new)]) == 0
        cookiecutter(
            str(ROOT / "template"), no_input=True, extra_context=answers,
            output_dir=str(by_cookiecutter), accept_hooks=True,
        )  # fmt: skip
    assert snapshot(by_new) == snapshot(by_cookiecutter)
    assert len(snapshot(by_new)) == len(snapshot(SEED)) + 2 * len(VARIANTS)
    assert not list(by_new.glob(".areal-devkit-*")) and not list(by_cookiecutter.glob(".*"))


@pytest.mark.parametrize(
    ("argv", "existing", "message"),
    [
        (["calc"], "myproj/workflow/calc.py", "calc.py (or a package of that name) already exists"),
        (["calc"], "tests/test_calc_workflow.py", "test_calc_workflow.py already exists"),
        (["fresh", "--class-name", "EchoWorkflow"], None, "EchoWorkflow is already exported"),
    ],
)
def test_a_conflict_is_refused_before_anything_is_written(
    tmp_path, capsys, argv, existing, message
):
    repo = tmp_path / "repo"
    shutil.copytree(SEED, repo)
    if existing:
        (repo / existing).parent.mkdir(exist_ok=True)
        (repo / existing).write_text("# mine\n")
    before = snapshot(repo)
    assert main(["new", *argv, "--package", "myproj.workflow", "--repo", str(repo)]) == 1
    err = capsys.readouterr().err
    assert message in err and "nothing was written" in err
    if existing:
        assert str(repo / existing) in err  # the error names the file
    assert snapshot(repo) == before
    assert not (tmp_path / "replay").exists()  # a refused run saves no answers to replay


def test_an_init_it_cannot_edit_is_refused_before_anything_is_written(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg/__init__.py").write_text('EXTRA = ["B"]\n__all__ = ["A"] + EXTRA\n')
    before = snapshot(repo)
    assert main(["new", "w", "--package", "pkg", "--repo", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "could not register WWorkflow in pkg/__init__.py" in err
    assert "must be a literal list" in err
    assert snapshot(repo) == before and not (repo / "tests").exists()
