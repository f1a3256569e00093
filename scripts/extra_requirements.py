# SPDX-License-Identifier: Apache-2.0
"""Print single requirements out of pyproject.toml's extras, one a line, for pip.

``python scripts/extra_requirements.py agents:anthropic dev:pytest`` prints
``anthropic>=0.60`` and ``pytest>=8.0``. Why: `make demo` installs a few packages of the
``agents`` and ``dev`` extras, not the whole extras, and their version bounds must stay the
ones pyproject.toml gives (one place to change them).

``python scripts/extra_requirements.py --deps runtime,dev`` prints the base dependencies and
every requirement of those extras: the set-up scripts install them first, side by side, and
the project itself last with ``--no-deps`` (the one step that writes into the checkout).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def requirement_name(requirement: str) -> str:
    """The distribution name a requirement string starts with, normalised (PEP 503)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if not match:
        raise ValueError(f"not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def pick(extras: dict[str, list[str]], wanted: list[str]) -> list[str]:
    """The requirement of each ``extra:name`` in ``wanted``; an unknown one is an error."""
    picked = []
    for item in wanted:
        extra, sep, name = item.partition(":")
        if not sep or extra not in extras:
            raise ValueError(f"{item!r}: expected EXTRA:NAME with an extra of pyproject.toml")
        found = [r for r in extras[extra] if requirement_name(r) == requirement_name(name)]
        if not found:
            raise ValueError(f"{item!r}: the {extra!r} extra has no {name!r}")
        picked.append(found[0].split("#")[0].strip())
    return picked


def dependencies(project: dict, extras: list[str]) -> list[str]:
    """The base dependencies and every requirement of ``extras``, comments dropped."""
    optional = project["optional-dependencies"]
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise ValueError(f"{unknown[0]!r}: not an extra of pyproject.toml")
    found = list(project["dependencies"])
    for extra in extras:
        found += optional[extra]
    return [r.split("#")[0].strip() for r in found]


def main(argv: list[str]) -> int:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    try:
        if argv[:1] == ["--deps"] and len(argv) == 2:
            lines = dependencies(project, [e for e in argv[1].split(",") if e])
        else:
            lines = pick(project["optional-dependencies"], argv)
    except ValueError as exc:
        print(f"extra_requirements: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
