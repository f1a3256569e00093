# SPDX-License-Identifier: Apache-2.0
"""The one error the ``areal-devkit`` command reports as a single line: the user's input is wrong.

``cli.main`` prints a :class:`UsageError` as ``areal-devkit CMD: error: ...`` and exits 2.
Anything else is a bug (in the tool or in the user's workflow) and keeps its traceback.
Validation in the commands raises ``UsageError`` directly; where a command hands user input to
the runtime (a workflow spec, a dataset, an engine spec, constructor kwargs), :func:`usage_errors`
turns the runtime's refusal of that input into one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class UsageError(ValueError):
    """Bad input to a command: a flag, a path, a spec, a file's contents. Exit 2, one line.

    A ``ValueError`` so that library callers of the commands' helpers can keep catching that.
    """


INPUT_REFUSALS = (ValueError, TypeError, OSError, ImportError)


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Re-raise the runtime's refusal of the user's input (:data:`INPUT_REFUSALS`) as UsageError.

    Only around a call whose failure means the input was wrong, never around the work itself.
    """
    try:
        yield
    except UsageError:
        raise
    except INPUT_REFUSALS as exc:
        raise UsageError(str(exc)) from exc
