# SPDX-License-Identifier: Apache-2.0
"""A module imported on first attribute access.

Why: AReaL binds optional or heavy modules at module level (``from torch import profiler``,
``import wandb``), and its tests patch those names (``patch("...stats_logger.trackio")``). A
``LazyModule`` keeps the name patchable without importing torch or an uninstalled tracker when
the module is merely imported.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name``; the first attribute access imports it.

    Attributes set on the object (a test's fake) take precedence over the module's. The module
    is looked up in ``sys.modules`` on every access (a dict lookup once imported), so a module
    swapped there later is the one used.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def loaded(self) -> bool:
        """Whether the module is imported (by this object or anyone else)."""
        return sys.modules.get(self._name) is not None

    def module(self) -> ModuleType:
        """The module itself; ImportError when it is not installed."""
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        # Private and dunder names are what introspection probes (mock, inspect, copy): answer
        # them here instead of importing a module that may not be installed.
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.module(), attr)

    def __repr__(self) -> str:
        return f"<LazyModule {self._name!r}>"
