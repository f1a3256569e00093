# SPDX-License-Identifier: Apache-2.0
"""Refuse bad input before cookiecutter writes anything into the repository."""

import json
import sys
from pathlib import Path

VALUES = json.loads(
    r"""{{ {"workflow_name": cookiecutter.workflow_name, "class_name": cookiecutter.class_name, "package": cookiecutter.package, "variant": cookiecutter.variant, "max_turns": cookiecutter.max_turns, "turn_discount": cookiecutter.turn_discount} | tojson }}"""
)

try:
    from areal_devkit.scaffold.validation import validate
except ImportError:
    sys.exit("areal-devkit is not installed in this Python: pip install areal-devkit")

errors = validate(Path.cwd(), **VALUES)
if errors:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    print("nothing was written.", file=sys.stderr)
    sys.exit(1)
