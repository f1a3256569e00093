# SPDX-License-Identifier: Apache-2.0
"""Write the rendered module and test, and the export, into the repository all or nothing.

This runs in the staging folder ``<repo>/.areal-devkit-staging-*/`` that plain ``cookiecutter``
renders into (``areal-devkit new`` renders in its own process and runs no hooks). On a failure
cookiecutter removes that folder, so the repository is as before.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

# cookiecutter runs a rendered copy of this hook from the temporary folder and never deletes it
# (two files left there a run); Python has read the copy already, so it goes now.
if Path(__file__).resolve().parent == Path(tempfile.gettempdir()).resolve():
    Path(__file__).unlink(missing_ok=True)

VALUES = json.loads(
    r"""{{ {"workflow_name": cookiecutter.workflow_name, "class_name": cookiecutter.class_name, "package": cookiecutter.package} | tojson }}"""
)

try:
    from areal_devkit.scaffold.commit import write_all
    from areal_devkit.scaffold.plan import planned_files, refusal, summary
    from areal_devkit.scaffold.variants import generated_paths
except ImportError:
    sys.exit("areal-devkit is not installed in this Python: pip install areal-devkit")

staging = Path.cwd()
repo = staging.parent
generated = generated_paths(VALUES["package"], VALUES["workflow_name"])
rendered = {path: (staging / path).read_text(encoding="utf-8") for path in generated}
try:
    files = planned_files(repo, VALUES, rendered)
except Exception as exc:
    print(f"error: {refusal(VALUES, exc)}", file=sys.stderr)
    print("nothing was written; the repository is as before.", file=sys.stderr)
    sys.exit(1)
write_all(repo, files, ruff=generated)
shutil.rmtree(staging, ignore_errors=True)
print(summary(VALUES))
