# SPDX-License-Identifier: Apache-2.0
"""Render the template in this process, with cookiecutter's own Jinja environment.

``areal-devkit new`` needs the two rendered files, not a rendered folder: this module answers
the template's questions (:func:`template_values`) and renders each file of the template's
root folder to text (:func:`render`) exactly as ``cookiecutter.generate.generate_file`` does:
the same :class:`StrictEnvironment` with the template's extensions, the same loader paths,
the same context. So ``cookiecutter template`` and ``areal-devkit new`` produce the same bytes,
and nothing is written until the caller has every file in hand.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from areal_devkit.errors import UsageError


def template_dir() -> Path:
    """The cookiecutter template, shipped inside the package (``template/`` links to it)."""
    path = Path(__file__).resolve().parents[1] / "template"
    if not (path / "cookiecutter.json").is_file():
        raise UsageError(
            f"the cookiecutter template is missing from {path}; reinstall areal-devkit"
        )
    return path


@contextlib.contextmanager
def _extensions_importable(template: Path) -> Iterator[None]:
    """The template's Jinja extensions (``local_extensions.py``) importable, as cookiecutter
    makes them while it prompts and renders."""
    sys.path.insert(0, str(template))
    try:
        yield
    finally:
        sys.path.remove(str(template))


def template_values(answers: dict[str, Any]) -> dict[str, Any]:
    """Every value of ``cookiecutter.json`` for ``answers`` (derived and private ones filled in),
    as ``cookiecutter --no-input`` with ``answers`` as extra context works them out."""
    from cookiecutter.generate import generate_context
    from cookiecutter.prompt import prompt_for_config

    template = template_dir()
    with _extensions_importable(template):
        context = generate_context(str(template / "cookiecutter.json"), extra_context=answers)
        return dict(prompt_for_config(context, no_input=True))


def render(values: dict[str, Any]) -> dict[PurePosixPath, str]:
    """``{path relative to the repository: text}`` for every file of the template's root folder.

    cookiecutter writes a rendered file with ``newline=None`` when the template file sets no
    line ending (ours are one ``{% include %}`` line each) and ``cookiecutter.json`` no
    ``_new_lines``; writing this text the same way gives the same bytes.
    """
    from cookiecutter.utils import create_env_with_context
    from jinja2 import FileSystemLoader

    template = template_dir()
    root = next(template.glob("{{cookiecutter.*}}"))
    context = {"cookiecutter": values}
    with _extensions_importable(template):
        env = create_env_with_context(context)
    env.loader = FileSystemLoader([str(root), str(template / "templates")])
    rendered = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        target = PurePosixPath(env.from_string(name).render(**context))
        rendered[target] = env.get_template(name).render(**context)
    return rendered
