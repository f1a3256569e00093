# SPDX-License-Identifier: Apache-2.0
"""Register the export in the package __init__.py; on any failure remove what was generated."""

import json
import sys
from pathlib import Path

VALUES = json.loads(
    r"""{{ {"workflow_name": cookiecutter.workflow_name, "class_name": cookiecutter.class_name, "package": cookiecutter.package} | tojson }}"""
)
package_dir = Path(VALUES["package"].replace(".", "/"))

try:
    from areal_devkit.scaffold.init_editor import register_export
    from areal_devkit.scaffold.variants import generated_paths
except ImportError:
    sys.exit("areal-devkit is not installed in this Python: pip install areal-devkit")

generated = [Path(p) for p in generated_paths(VALUES["package"], VALUES["workflow_name"])]

try:
    register_export(
        package_dir / "__init__.py",
        VALUES["class_name"],
        f"{VALUES['package']}.{VALUES['workflow_name']}",
    )
except Exception as exc:
    for path in generated:
        path.unlink(missing_ok=True)
    print(
        f"error: could not register {VALUES['class_name']} in {package_dir / '__init__.py'}: {exc}",
        file=sys.stderr,
    )
    print("the generated files were removed; the repository is as before.", file=sys.stderr)
    sys.exit(1)

# Best effort: format the new files with the project's own ruff settings, if ruff is installed.
try:
    import subprocess

    files = [str(p) for p in generated]
    subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--fix", "--select", "I", "-q", *files],
        check=False,
        capture_output=True,
    )
    subprocess.run(
        [sys.executable, "-m", "ruff", "format", "-q", *files], check=False, capture_output=True
    )
except OSError:
    pass

print(
    f"created {generated[0]} and {generated[1]}; exported {VALUES['class_name']} from {VALUES['package']}"
)
print(f"next: python -m pytest {generated[1]} && areal-lint {generated[0]}")
