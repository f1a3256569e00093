# SPDX-License-Identifier: Apache-2.0
"""The redo journal: a scaffold cut short after any number of writes is finished by the next
run, and one cut short before its journal exists left nothing behind."""

from pathlib import Path, PurePosixPath

import pytest

from areal_devkit.scaffold import commit
from areal_devkit.scaffold.commit import JOURNAL, finish_interrupted, write_all

FILES = {
    PurePosixPath("pkg/calc.py"): "x = 1\n",
    PurePosixPath("tests/test_calc.py"): "from pkg.calc import x\n",
    PurePosixPath("pkg/__init__.py"): '__all__ = ["x"]\n',
}


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (atomic_open's clean-up aside)."""


def snapshot(repo: Path) -> dict[str, bytes]:
    """Every file and folder, hidden ones included."""
    return {
        str(p.relative_to(repo)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(repo.rglob("*"))
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("__all__ = []\n")
    return tmp_path


# Writes that completed before the kill: 0 none, 1 the journal, 2 and the module, 3 and the test.
@pytest.mark.parametrize("writes", range(4))
def test_a_run_cut_after_any_write_ends_unchanged_or_complete(repo, monkeypatch, writes):
    before = snapshot(repo)
    real_write, done = commit.atomic_write_text, []

    def cut_short(path, text, *args, **kwargs):
        if len(done) == writes:
            raise Killed
        done.append(path)
        real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(commit, "atomic_write_text", cut_short)
    with pytest.raises(Killed):
        write_all(repo, FILES)
    monkeypatch.undo()
    if writes == 0:
        assert snapshot(repo) == before  # no journal, no files, no tests/ folder
        assert finish_interrupted(repo) is False
        return
    assert (repo / JOURNAL).is_file()
    (repo / "pkg/.calc.py.k1ll3d.tmp").write_text("x =")  # a temporary a killed write left
    (repo / f".{JOURNAL}.k1ll3d.tmp").write_text("{")  # and one of the journal's
    assert finish_interrupted(repo) is True
    assert snapshot(repo) == {
        "pkg": b"<dir>",
        "tests": b"<dir>",
        **{str(path): text.encode() for path, text in FILES.items()},
    }


def test_an_uninterrupted_run_leaves_no_journal_and_recovery_has_nothing_to_do(repo):
    write_all(repo, FILES)
    assert not (repo / JOURNAL).exists()
    assert finish_interrupted(repo) is False
    assert (repo / "pkg/__init__.py").read_text() == '__all__ = ["x"]\n'
