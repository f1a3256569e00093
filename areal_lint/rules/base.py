# SPDX-License-Identifier: Apache-2.0
"""What every rule declares: its code, one-line message, autofix kind and documentation."""

from __future__ import annotations

from typing import ClassVar

from areal_lint.finding import FixKind


class Rule:
    """Base of all rules; subclasses set the class attributes and a What/Why/Example/Fix docstring."""

    code: ClassVar[str]
    message: ClassVar[str]  # str.format template; says what is wrong and what to do instead
    fix: ClassVar[FixKind | None] = None
    opt_in: ClassVar[bool] = False

    @classmethod
    def render(cls, **kwargs: object) -> str:
        return cls.message.format(**kwargs)
