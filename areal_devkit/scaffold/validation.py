# SPDX-License-Identifier: Apache-2.0
"""Checks run before anything is written; each error names the problem and the fix."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from areal_devkit.scaffold.init_editor import exported_names
from areal_devkit.scaffold.variants import VARIANTS, generated_paths

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
CLASS = re.compile(r"^[A-Z][A-Za-z0-9]*$")
PACKAGE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def validate(
    repo: Path,
    workflow_name: str,
    class_name: str,
    package: str,
    variant: str,
    max_turns: int | str = 3,
    turn_discount: float | str = 0.9,
) -> list[str]:
    """Every reason the scaffold must not be written into ``repo`` (empty when it may)."""
    errors = []
    if not NAME.match(workflow_name):
        errors.append(
            f"workflow_name {workflow_name!r} is not a lowercase Python identifier "
            "(letters, digits, _; starting with a letter): try e.g. 'math_verify'"
        )
    elif keyword.iskeyword(workflow_name):
        errors.append(f"workflow_name {workflow_name!r} is a Python keyword; pick another name")
    if not CLASS.match(class_name):
        errors.append(
            f"class_name {class_name!r} must be CamelCase letters and digits, e.g. 'MathWorkflow'"
        )
    if variant not in VARIANTS:
        errors.append(f"variant {variant!r} is unknown; choose one of {', '.join(VARIANTS)}")
    if not PACKAGE.match(package):
        errors.append(
            f"package {package!r} must be a dotted Python package path like 'areal.workflow'"
        )
        return errors
    package_dir = repo / package.replace(".", "/")
    init = package_dir / "__init__.py"
    if not init.is_file():
        errors.append(
            f"target package {package} not found: {init} does not exist; run from the repository "
            "root (or pass -o / --repo) and name an existing package"
        )
    elif NAME.match(workflow_name):
        module_path, test_path = generated_paths(package, workflow_name)
        module = repo / module_path
        if module.exists() or (package_dir / workflow_name).is_dir():
            errors.append(
                f"{module} (or a package of that name) already exists; choose another workflow_name"
            )
        test = repo / test_path
        if test.exists():
            errors.append(
                f"{test} already exists; choose another workflow_name or remove the old test"
            )
        try:
            exported = exported_names(init.read_text(encoding="utf-8"))
        except Exception as exc:  # a broken __init__ is reported, not overwritten
            errors.append(f"cannot read {init}: {exc}")
            exported = set()
        if class_name in exported:
            errors.append(
                f"{class_name} is already exported by {package}; choose another class_name"
            )
    if variant == "multi_turn":
        try:
            if int(max_turns) < 1:
                errors.append(f"max_turns must be >= 1, got {max_turns}")
        except ValueError:
            errors.append(f"max_turns must be an integer, got {max_turns!r}")
        try:
            if not 0 < float(turn_discount) <= 1:
                errors.append(f"turn_discount must be in (0, 1], got {turn_discount}")
        except ValueError:
            errors.append(f"turn_discount must be a number, got {turn_discount!r}")
    return errors
