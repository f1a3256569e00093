# SPDX-License-Identifier: Apache-2.0
"""Refuse bad input before anything reaches the repository (this runs in the staging folder)."""

import json
import sys
import tempfile
from pathlib import Path

# cookiecutter runs a rendered copy of this hook from the temporary folder and never deletes it
# (two files left there a run); Python has read the copy already, so it goes now.
if Path(__file__).resolve().parent == Path(tempfile.gettempdir()).resolve():
    Path(__file__).unlink(missing_ok=True)

VALUES = json.loads(
    r"""{{ {"workflow_name": cookiecutter.workflow_name, "class_name": cookiecutter.class_name, "package": cookiecutter.package, "variant": cookiecutter.variant, "max_turns": cookiecutter.max_turns, "turn_discount": cookiecutter.turn_discount} | tojson }}"""
)
ANSWERS_REPO = r"""{{ cookiecutter.__answers_repo }}"""

try:
    from areal_devkit.scaffold.replay import replay_refusal, stamp_replay
    from areal_devkit.scaffold.validation import validate
except ImportError:
    sys.exit("areal-devkit is not installed in this Python: pip install areal-devkit")

repo = Path.cwd().parent  # cookiecutter renders into <repo>/.areal-devkit-staging-*/
errors = validate(repo, **VALUES)
refusal = replay_refusal(repo, ANSWERS_REPO)  # replayed answers carry the repository they are from
if not ANSWERS_REPO:
    stamp_replay(repo)  # fresh answers: cookiecutter just saved them; record whose they are
for error in [*errors, *([refusal] if refusal else [])]:
    print(f"error: {error}", file=sys.stderr)
if errors or refusal:
    print("nothing was written.", file=sys.stderr)
    sys.exit(1)
