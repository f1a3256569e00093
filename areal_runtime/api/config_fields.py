# SPDX-License-Identifier: Apache-2.0
"""Config fields with help text (``config_docs`` renders them into ``docs/config_fields.md``).

Every field of the experiment configs carries ``metadata={"help": ...}`` as AReaL's do, so
``--help``-style tools, the docs page and a reader of the dataclass see the same sentence.
Fields that have no effect on one machine also carry ``"ignored": True``; the loader reports
them when a YAML sets them. Only the field makers live here: the config modules import them,
so this module imports none of them back.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any


def _default_kwargs(default: Any) -> dict[str, Any]:
    if isinstance(default, dict | list):
        return {"default_factory": lambda: type(default)(default)}
    return {"default": default}


def help_field(default: Any, text: str) -> Any:
    """A field whose default is ``default`` (copied per instance when mutable), with help."""
    return field(**_default_kwargs(default), metadata={"help": text})


def ignored_field(default: Any, text: str) -> Any:
    """A field accepted for AReaL compatibility that has no effect on one machine."""
    return field(**_default_kwargs(default), metadata={"help": text, "ignored": True})
