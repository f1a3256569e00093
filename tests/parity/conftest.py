# SPDX-License-Identifier: Apache-2.0
"""Contract tests run against the real AReaL and against areal_runtime.

Runs under ``.venv-areal`` (``make parity``); tests/conftest.py does not collect this folder
where ``areal`` is missing. ``pkg`` parametrizes a test over both packages; ``mod(pkg, name)``
imports ``{pkg}.{name}``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import areal  # noqa: F401  (fail loudly, not skip, when the real package is missing)
import pytest

PACKAGES = ("areal", "areal_runtime")


def mod(pkg: str, name: str) -> ModuleType:
    """``{pkg}.{name}``, e.g. ``mod("areal", "api.cli_args")``."""
    return importlib.import_module(f"{pkg}.{name}")


@pytest.fixture(params=PACKAGES)
def pkg(request: pytest.FixtureRequest) -> str:
    return request.param


class StubTokenizer:
    """Just the ids ModelResponse and GenerationHyperparameters read."""

    def __init__(self, eos_token_id: Any = 2, pad_token_id: Any = 0) -> None:
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
