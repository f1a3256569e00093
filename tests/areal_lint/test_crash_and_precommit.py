# SPDX-License-Identifier: Apache-2.0
"""No tracebacks on real code, and the hook works through a real ``pre-commit run``."""

import os
import re
import shutil
import site
import subprocess
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from areal_lint import __version__
from areal_lint.runner import lint_source

ROOT = Path(__file__).resolve().parents[2]


def _lint_batch(paths: list[str]) -> list[str]:
    crashes = []
    for path in paths:
        try:
            source = Path(path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        try:
            lint_source(source, path)
        except Exception:
            crashes.append(f"{path}\n{traceback.format_exc()}")
    return crashes


@pytest.mark.slow
def test_no_traceback_on_any_file_in_site_packages():
    roots = {Path(p) for p in site.getsitepackages()}
    files = sorted(str(p) for root in roots for p in root.rglob("*.py"))
    assert len(files) >= 10_000, f"only {len(files)} files to check"
    batches = [files[i : i + 500] for i in range(0, len(files), 500)]
    with ProcessPoolExecutor(os.cpu_count() or 2) as pool:
        crashes = [c for batch in pool.map(_lint_batch, batches) for c in batch]
    assert crashes == [], crashes[:3]


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})  # fmt: skip


def readme_pre_commit_snippets() -> list[str]:
    """The README's two pre-commit configurations (by repository, local), as written."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(repos:.*?)```", readme, re.S)
    assert len(blocks) == 2, blocks
    return blocks


def test_versions_agree_and_the_readme_pins_this_release():
    import tomllib

    import areal_devkit
    import areal_lint
    import areal_runtime

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (
        areal_devkit.__version__ == areal_lint.__version__ == areal_runtime.__version__ == version
    )
    assert f"rev: v{version}" in readme_pre_commit_snippets()[0]
    assert f"## {version}" in (ROOT / "CHANGELOG.md").read_text()


def working_tree_files(skip: tuple[str, ...]) -> list[str]:
    """The checkout's files as git sees them (tracked, or new and not ignored), so the copy is
    the working tree's source without the virtualenvs and build output beside it (.venv-areal
    alone is gigabytes: copying it was most of this test's minute)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    return [n for n in listed if n and not n.startswith(skip) and (ROOT / n).is_file()]


@pytest.mark.slow
def test_real_pre_commit_run_with_the_hook_by_repository(tmp_path):
    """pre-commit clones this repository (a snapshot of the working tree) and installs the hook."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for this test")
    hook_repo = tmp_path / "hook-repo"
    for name in working_tree_files(skip=("tests/", "benchmarks/")):
        (hook_repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, hook_repo / name)
    git("init", "-q", cwd=hook_repo)
    git("add", "-A", cwd=hook_repo)
    git("commit", "-qm", "snapshot", cwd=hook_repo)
    # The README's snippet as written, but for the clone address (no network here): its rev
    # is the release tag of this version.
    by_repository, local = readme_pre_commit_snippets()
    rev = re.search(r"rev: (\S+)", by_repository).group(1)
    assert rev == f"v{__version__}", "the README must pin the current release"
    git("tag", rev, cwd=hook_repo)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(
        re.sub(r"repo: https://\S+", f"repo: {hook_repo}", by_repository)
    )
    (project / "flow.py").write_text(
        "import time\n\nasync def arun_episode(self, engine, data):\n    time.sleep(1)\n"
    )
    (project / "ok.py").write_text("x = 1\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PIP_CONSTRAINT": str(ROOT / "scripts" / "constraints.txt"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # local hook
    }

    def run_pre_commit() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files"],
            cwd=project, capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip

    proc = run_pre_commit()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "flow.py:4:5: ARL110 time.sleep() blocks the event loop" in proc.stdout
    (project / "flow.py").write_text(
        "import asyncio\n\nasync def arun_episode(self, engine, data):\n    await asyncio.sleep(1)\n"
    )
    proc = run_pre_commit()
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # The README's local hook, exactly as written, with areal-lint on PATH.
    (project / ".pre-commit-config.yaml").write_text(local)
    (project / "flow.py").write_text(
        "import time\n\nasync def arun_episode(self, engine, data):\n    time.sleep(1)\n"
    )
    proc = run_pre_commit()
    assert proc.returncode == 1 and "flow.py:4:5: ARL110" in proc.stdout, proc.stdout

    # The fixing hook rewrites the file; pre-commit fails the run because a hook changed it.
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: areal-lint-fix\n        args: [--unsafe-fixes]\n"
    )
    (project / "flow.py").write_text(
        "import time\n\nasync def arun_episode(self, engine, data):\n    time.sleep(1)\n"
    )
    proc = run_pre_commit()
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout, proc.stdout
    assert "    await asyncio.sleep(1)\n" in (project / "flow.py").read_text()
