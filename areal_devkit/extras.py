# SPDX-License-Identifier: Apache-2.0
"""Which extra of areal-devkit installs a module, read from the package's own metadata.

A missing-module hint must name the extra that really provides the module; reading the
``Requires-Dist`` lines of the installed metadata (written from pyproject.toml) keeps the hint
right when an extra changes.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata

# Distributions whose import name is not their normalised project name.
IMPORT_NAME = {
    "pillow": "PIL",
    "openai-agents": "agents",
    "pyyaml": "yaml",
    "pytest-xdist": "xdist",
}
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def import_name(requirement: str) -> str:
    """The top-level module a requirement string installs (``"math-verify>=0.9"`` -> ``math_verify``)."""
    match = _NAME.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return IMPORT_NAME.get(name, name.replace("-", "_"))


@functools.cache
def extras_by_module() -> dict[str, str]:
    """``{module: extra}`` for every optional dependency (the first extra that lists it)."""
    try:
        lines = metadata.metadata("areal-devkit").get_all("Requires-Dist") or []
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, str] = {}
    for line in lines:
        requirement, _, marker = line.partition(";")
        extra = _EXTRA_MARKER.search(marker)
        if extra is not None:
            found.setdefault(import_name(requirement), extra.group(1))
    return found


def extra_providing(module: str) -> str | None:
    """The extra that installs top-level ``module``, or None when no extra does."""
    return extras_by_module().get(module.split(".")[0])
