# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit new``: scaffold a workflow with the cookiecutter template, safely.

It always passes the flags that make generating into an existing repository safe (overwrite
allowed only for the project root ``.``, existing files skipped, hooks on), refuses
``--accept-hooks no`` (the hooks are the safety checks), and prints the next steps.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from areal_runtime.scaffold.validation import VARIANTS


def template_dir() -> Path:
    """The cookiecutter template, shipped inside the package (``template/`` links to it)."""
    path = Path(__file__).resolve().parent / "template"
    if not (path / "cookiecutter.json").is_file():
        raise FileNotFoundError(
            f"the cookiecutter template is missing from {path}; reinstall areal-devkit"
        )
    return path


def add_parser(commands: Any) -> None:
    p = commands.add_parser("new", help="scaffold a workflow, its export and its test")
    p.add_argument("workflow_name", help="module name, e.g. math_verify")
    p.add_argument("--variant", choices=VARIANTS, default="rlvr")
    p.add_argument("--package", default="areal.workflow", help="existing package to add it to")
    p.add_argument("--repo", default=".", help="repository root (default: current directory)")
    p.add_argument("--class-name", help="default: CamelCase of the name + Workflow/Agent")
    p.add_argument("--description", help="one line for the docstring")
    p.add_argument(
        "--runtime",
        choices=["areal", "areal_runtime"],
        help="import root (default: from --package)",
    )
    p.add_argument("--accept-hooks", default="yes", help=argparse.SUPPRESS)
    p.add_argument("--replay", action="store_true", help="replay the answers of the last run")
    p.set_defaults(handler=new)


def new(args: argparse.Namespace) -> int:
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    if args.accept_hooks != "yes":
        raise ValueError(
            "--accept-hooks must stay 'yes': the hooks are what keep your repository safe"
        )
    repo = Path(args.repo).resolve()
    if not repo.is_dir():
        raise FileNotFoundError(f"repository {repo} does not exist")
    context = {
        "workflow_name": args.workflow_name,
        "variant": args.variant,
        "package": args.package,
    }
    for key in ("class_name", "description", "runtime"):
        if getattr(args, key):
            context[key] = getattr(args, key)
    # cookiecutter logs a traceback for a refused hook; the hook already printed the reasons.
    logging.getLogger("cookiecutter").setLevel(logging.CRITICAL)
    try:
        cookiecutter(
            str(template_dir()),
            no_input=not args.replay,
            replay=args.replay or None,
            extra_context=None if args.replay else context,
            output_dir=str(repo),
            overwrite_if_exists=True,
            skip_if_file_exists=True,
            accept_hooks=True,
        )
    except FailedHookException:
        print("areal-devkit new: nothing was changed (see the errors above)")
        return 1
    return 0
