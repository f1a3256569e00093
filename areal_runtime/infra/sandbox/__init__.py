# SPDX-License-Identifier: Apache-2.0
"""Sandboxes that run model-written code, at AReaL's path (``areal.infra.sandbox``).

``LocalRunner`` runs code in a local subprocess with a wall-clock timeout and a memory cap:
the laptop stand-in for a cloud sandbox, with the same ``run`` / result shape as AReaL's
``DaytonaRunner``. ``DaytonaRunner`` and ``DaytonaClientManager`` import without the Daytona
SDK (as in AReaL); using them without it raises an ImportError that says what to install.
"""

from areal_runtime.infra.sandbox._client import DaytonaClientManager
from areal_runtime.infra.sandbox.local import LocalRunner
from areal_runtime.infra.sandbox.result import DaytonaRunResult, RunResult
from areal_runtime.infra.sandbox.runner import DaytonaRunner

__all__ = ["DaytonaClientManager", "DaytonaRunResult", "DaytonaRunner", "LocalRunner", "RunResult"]
