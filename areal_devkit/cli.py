# SPDX-License-Identifier: Apache-2.0
"""The ``areal-devkit`` command: ``new``, ``run``, ``check``, ``train``, ``view`` and ``serve``.

Exit status: 0 success, 1 the command ran and found a problem (rejected episodes, failed
checks), 2 usage error (a ``UsageError``, one line) or a missing extra. Any other exception is a
bug, in the tool or in the user's workflow: it prints its traceback (exit 1). Like ``python -m``, the current directory is
importable, so ``areal-devkit run mypkg.workflow.x:Cls`` works from a project root.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from areal_devkit import __version__
from areal_devkit.errors import UsageError

COMMANDS = ("new", "run", "check", "train", "view", "serve")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="areal-devkit",
        description="Write, check, test and train AReaL-style rollout workflows on a laptop.",
    )
    parser.add_argument("--version", action="version", version=f"areal-devkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"areal_devkit.commands.{name}")
        module.add_parser(commands)
    return parser


def missing_extra_message(exc: BaseException, command: str) -> str | None:
    """The install hint when ``exc`` (or what caused it) is a module only an extra provides."""
    from areal_devkit.extras import extra_providing

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError):
            root = (exc.name or "").split(".")[0]
            extra = extra_providing(root)
            if extra is not None:
                return (
                    f"areal-devkit {command} needs the {extra} extra (missing module {root!r}): "
                    f"pip install 'areal-devkit[{extra}]'"
                )
        exc = exc.__cause__ or exc.__context__
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return int(args.handler(args) or 0)
    except UsageError as exc:
        hint = missing_extra_message(exc, args.command)
        print(f"areal-devkit {args.command}: error: {hint or exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        hint = missing_extra_message(exc, args.command)
        if hint is None:
            raise
        print(f"areal-devkit {args.command}: error: {hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"areal-devkit {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `areal-devkit run ... | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
