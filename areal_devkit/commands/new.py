# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit new``: a workflow module, its export in the package ``__init__.py``, its test.

Renders in this process and runs no cookiecutter hooks; ``--accept-hooks`` stays for scripts
written for the cookiecutter flag, and ``no`` is refused: the checks always run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from areal_devkit.errors import UsageError
from areal_devkit.scaffold.variants import VARIANTS

EXAMPLES = """examples:
  areal-devkit new math_verify --variant rlvr --package areal.workflow
  areal-devkit new my_agent --variant agent_openai --package mypkg.workflows --runtime areal_runtime
  areal-devkit new retry --variant multi_turn --package mypkg.workflows --repo path/to/repo
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "new",
        help="scaffold a workflow, its export and its test",
        description="Scaffold a workflow module, register its export and write a real test.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("workflow_name", help="module name, e.g. math_verify")
    p.add_argument(
        "--variant",
        choices=list(VARIANTS),
        default="rlvr",
        help="; ".join(f"{name}: {what}" for name, what in VARIANTS.items()),
    )
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
    from areal_devkit.scaffold import ScaffoldRefused, scaffold

    if args.accept_hooks != "yes":
        raise UsageError(
            "--accept-hooks must stay 'yes': the checks are what keep your repository safe"
        )
    context = {
        "workflow_name": args.workflow_name,
        "variant": args.variant,
        "package": args.package,
    }
    for key in ("class_name", "description", "runtime"):
        if getattr(args, key):
            context[key] = getattr(args, key)
    try:
        scaffold(Path(args.repo).resolve(), context, replay=args.replay)
    except ScaffoldRefused:
        print("areal-devkit new: nothing was changed (see the errors above)")
        return 1
    return 0
