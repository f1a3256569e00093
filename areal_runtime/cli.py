# SPDX-License-Identifier: Apache-2.0
"""The ``areal-devkit`` command: ``run`` a workflow, ``new`` to scaffold one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="areal-devkit", description="Write, check and run AReaL-style rollout workflows."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    from areal_runtime import run_command

    run_command.add_parser(commands)
    try:
        from areal_runtime import scaffold
    except ImportError:  # the template wrapper is optional in stripped installs
        scaffold = None
    if scaffold is not None:
        scaffold.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, ImportError) as exc:
        print(f"areal-devkit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
