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
from pathlib import Path

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


_OWN_PACKAGES = ("areal_devkit", "areal_runtime", "areal_lint")


def _importing_file(exc: BaseException) -> str | None:
    """The file whose ``import`` raised ``exc``: the last traceback frame outside importlib."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<frozen") and "importlib" not in Path(name).parts:
            found = name
        tb = tb.tb_next
    return found


def _is_own_file(name: str) -> bool:
    return any(part in _OWN_PACKAGES for part in Path(name).parts)


def missing_extra_message(exc: BaseException, command: str) -> str | None:
    """The install hint when ``exc`` (or what caused it) is a missing module.

    A module the tool itself imports, or one of the runtime extra's (torch ...), names the
    extra that provides it; any other module the user's own code imports (AReaL's scripts use
    ``datasets``, which AReaL depends on) names that file and the package to install, not an
    extra of this tool.
    """
    from areal_devkit.extras import extra_providing

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError):
            root = (exc.name or "").split(".")[0]
            where = _importing_file(exc)
            extra = extra_providing(root)
            # The runtime extra (torch, transformers ...) is what any workflow runs on; another
            # extra's module imported by the user's own code is the user's dependency.
            if where is not None and not _is_own_file(where) and extra != "runtime":
                return (
                    f"{where} imports {root!r}, which is not installed in this environment: "
                    f"install it (pip install {root}, if its package has that name) and rerun"
                )
            if extra is not None:
                return (
                    f"areal-devkit {command} needs the {extra} extra (missing module {root!r}): "
                    f"pip install 'areal-devkit[{extra}]'"
                )
        exc = exc.__cause__ or exc.__context__
    return None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line; a command that takes ``KEY=VALUE`` overrides (``train``) gets
    them wherever they stand among its flags, as AReaL's scripts take them."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    is_override = getattr(args, "is_override", None)
    if is_override is not None:
        args.overrides = [*args.overrides, *extra]
        extra = [token for token in args.overrides if not is_override(token)]
        if extra:
            parser.error(
                f"unrecognized arguments: {' '.join(extra)} (overrides are KEY=VALUE, "
                "+KEY=VALUE or ~KEY)"
            )
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
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
