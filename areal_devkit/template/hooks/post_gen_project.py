# SPDX-License-Identifier: Apache-2.0
"""Register the export in the staged package __init__.py, then move everything into place.

This runs in the staging folder ``<repo>/.areal-devkit-staging-*/``; on any failure cookiecutter
removes that folder, so the repository is as before.
"""

import json
import subprocess
import sys
from pathlib import Path

VALUES = json.loads(
    r"""{{ {"workflow_name": cookiecutter.workflow_name, "class_name": cookiecutter.class_name, "package": cookiecutter.package} | tojson }}"""
)

try:
    from areal_devkit.scaffold import commit_staged, stage_init
    from areal_devkit.scaffold.init_editor import register_export
    from areal_devkit.scaffold.variants import generated_paths
except ImportError:
    sys.exit("areal-devkit is not installed in this Python: pip install areal-devkit")


def die_with_parent() -> None:
    """A killed ``areal-devkit new`` must not leave this hook moving files on its own (Linux)."""
    import ctypes
    import os
    import signal

    parent = os.getppid()
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the line above
        sys.exit(1)


if sys.platform.startswith("linux"):
    die_with_parent()

staging = Path.cwd()
repo = staging.parent
module, test = generated_paths(VALUES["package"], VALUES["workflow_name"])

try:
    init = stage_init(staging, repo, VALUES["package"])
    register_export(init, VALUES["class_name"], f"{VALUES['package']}.{VALUES['workflow_name']}")
except Exception as exc:
    print(
        f"error: could not register {VALUES['class_name']} in {module.parent / '__init__.py'}: {exc}",
        file=sys.stderr,
    )
    print("nothing was written; the repository is as before.", file=sys.stderr)
    sys.exit(1)

# Best effort: format the new files with the project's own ruff settings, if ruff is installed.
files = [str(staging / module), str(staging / test)]
for args in (["check", "--fix", "--select", "I", "-q"], ["format", "-q"]):
    try:
        subprocess.run([sys.executable, "-m", "ruff", *args, *files], check=False, capture_output=True)
    except OSError:
        pass

commit_staged(staging, VALUES["package"], VALUES["workflow_name"])
print(f"created {module} and {test}; exported {VALUES['class_name']} from {VALUES['package']}")
print(f"next: python -m pytest {test} && areal-lint {module}")
