# SPDX-License-Identifier: Apache-2.0
"""``getLogger`` as AReaL's ``areal.utils.logging`` offers it, on the standard library."""

from __future__ import annotations

import logging


def getLogger(
    name: str | None = None, type_: str | None = None, level: int = logging.INFO
) -> logging.Logger:
    """A logger under the ``areal_runtime`` namespace, so one switch silences the runtime.

    ``type_`` (AReaL's colour scheme) is accepted and ignored; ``level`` is set as in AReaL.
    """
    logger = logging.getLogger(f"areal_runtime.{name}" if name else "areal_runtime")
    logger.setLevel(level)
    return logger
