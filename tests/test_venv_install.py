# SPDX-License-Identifier: Apache-2.0
"""scripts/venv_install.sh finds torch's CPU wheel in pip's find-links folders, or nothing.

Where it finds the wheel, uv installs that file; where it finds nothing, pip installs torch by
name. A wrong answer either way costs a newcomer: a wheel of another version or Python breaks
the install, and a missed one costs pip's slower install.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


def local_torch_wheel(find_links: str, config: Path) -> str:
    """What ``_local_torch_wheel`` prints for this interpreter's venv (``sys.prefix``)."""
    env = {**os.environ, "PIP_FIND_LINKS": find_links, "PIP_CONFIG_FILE": str(config)}
    script = f'source scripts/venv_install.sh && _local_torch_wheel "{sys.prefix}"'
    proc = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_wheel_for_this_python_in_pip_folders_is_found(tmp_path):
    empty, wheels, config = tmp_path / "empty", tmp_path / "wheels", tmp_path / "pip.conf"
    empty.mkdir()
    wheels.mkdir()
    for name in (
        "torch-2.14.1+cpu-{tag}-{tag}-manylinux_2_28_x86_64.whl",  # another release
        "torch-2.13.0+cpu-cp39-cp39-manylinux_2_28_x86_64.whl",  # another Python
        "torch-2.13.0+cpu-{tag}-{tag}-manylinux_2_28_x86_64.whl",
    ):
        (wheels / name.format(tag=TAG)).write_bytes(b"")
    wanted = str(wheels / f"torch-2.13.0+cpu-{TAG}-{TAG}-manylinux_2_28_x86_64.whl")
    config.write_text("")
    assert local_torch_wheel(f"{empty} {wheels}", config) == wanted  # the variable's folders
    config.write_text(f"[global]\nfind-links = {wheels}\n")
    assert local_torch_wheel("", config) == wanted  # pip's configuration file


def test_nothing_where_no_folder_holds_it(tmp_path):
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nfind-links = https://example.invalid/wheels\n")
    assert local_torch_wheel(str(tmp_path), config) == ""
