# SPDX-License-Identifier: Apache-2.0
"""Every file a scaffold writes, worked out in memory before anything is written.

The step ``areal-devkit new`` and the template's post-generation hook share after rendering:
the module, the test, and the package ``__init__.py`` with the export added, in the order they
are written (the module first: the test is ruff-formatted once the module it imports exists).
An ``__init__.py`` the editor will not touch raises
:class:`~areal_devkit.scaffold.init_editor.InitEditError` here, while nothing is written yet.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from areal_devkit.scaffold.init_editor import with_export
from areal_devkit.scaffold.variants import generated_paths


def planned_files(
    repo: Path, values: dict[str, Any], rendered: dict[PurePosixPath, str]
) -> dict[PurePosixPath, str]:
    """``{path: text}`` for the module, the test and the edited ``__init__.py``, in the order to
    write them."""
    package, name = values["package"], values["workflow_name"]
    module, test = generated_paths(package, name)
    init = module.parent / "__init__.py"
    source = (repo / init).read_text(encoding="utf-8")
    exported = with_export(source, values["class_name"], f"{package}.{name}", where=str(init))
    return {module: rendered[module], test: rendered[test], init: exported}


def refusal(values: dict[str, Any], error: Exception) -> str:
    """Why the export could not be added (nothing has been written)."""
    init = generated_paths(values["package"], values["workflow_name"])[0].parent / "__init__.py"
    return f"could not register {values['class_name']} in {init}: {error}"


def summary(values: dict[str, Any]) -> str:
    """What was written and the next command to run."""
    module, test = generated_paths(values["package"], values["workflow_name"])
    return (
        f"created {module} and {test}; exported {values['class_name']} from {values['package']}\n"
        f"next: python -m pytest {test} && areal-lint {module}"
    )
