# SPDX-License-Identifier: Apache-2.0
"""The one atomic writer and JSONL reader: whole files or none, errors that name the line."""

import os
import stat
import subprocess
import sys

import pytest

from areal_runtime.utils.files import (
    JsonlError,
    atomic_dir,
    atomic_open,
    atomic_write_bytes,
    atomic_write_text,
    iter_jsonl,
    read_jsonl,
    swapped_out_dirs,
    write_jsonl,
)


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "old\n")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write("half")
        raise RuntimeError("killed")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    atomic_write_bytes(path, b"\x00new")
    assert path.read_bytes() == b"\x00new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_modes_an_existing_file_keeps_and_a_new_file_gets_from_the_umask(tmp_path):
    kept = tmp_path / "script.py"
    kept.write_text("x = 1\n")
    kept.chmod(0o751)
    atomic_write_text(kept, "x = 2\n", fsync=False)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o751 and kept.read_text() == "x = 2\n"
    umask = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "new.html", "<p>")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.html").stat().st_mode) == 0o640  # not mkstemp's 0600


def test_only_whole_file_modes_are_accepted(tmp_path):
    with pytest.raises(ValueError, match="'w' or 'wb'"), atomic_open(tmp_path / "x", "a"):
        pass


def test_jsonl_round_trip_skips_blank_lines_and_names_the_bad_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [{"a": 1}, {"b": [2]}])
    assert read_jsonl(path) == [{"a": 1}, {"b": [2]}]
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(JsonlError, match=r"rows\.jsonl:3: not valid JSON \(Expecting value\)"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"rows\.jsonl:2: each line must be a JSON object"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n\n{"b": 2}\n{"torn')
    assert list(iter_jsonl(path, skip_invalid=True)) == [(1, {"a": 1}), (3, {"b": 2})]


def test_a_folder_is_swapped_in_whole_and_a_failed_build_leaves_the_old_one(tmp_path):
    target = tmp_path / "ckpt"
    with atomic_dir(target, fsync=True) as tmp:
        (tmp / "w").write_text("1")
    with pytest.raises(KeyboardInterrupt), atomic_dir(target) as tmp:
        (tmp / "w").write_text("2")
        raise KeyboardInterrupt
    assert (target / "w").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    # killed between the renames: the previous folder is found, and the next swap drops it
    target.rename(tmp_path / ".ckpt.old-99")
    assert swapped_out_dirs(target) == [tmp_path / ".ckpt.old-99"]
    with atomic_dir(target) as tmp:
        (tmp / "w").write_text("3")
    assert (target / "w").read_text() == "3" and swapped_out_dirs(target) == []


def test_the_module_and_the_linter_that_uses_it_import_no_heavy_package():
    code = (
        "import sys, areal_runtime.utils.files, areal_lint.cli, areal_devkit.episode_record\n"
        "print(sorted(m for m in ('torch', 'numpy', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
