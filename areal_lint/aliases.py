# SPDX-License-Identifier: Apache-2.0
"""flake8-async's and ruff's codes for the checks an ARL rule also makes.

People moving from flake8-async or ruff keep their ``# noqa: ASYNC230`` and their
``--ignore``/``--select`` lists: each code here is read as the ARL code that reports the same
construct (ruff re-implements flake8-async under the same ASYNC numbers, and ``RUF006`` is its
own dangling-task rule). The table is rendered into docs/lint_rules.md by ``docs_gen``. This
module imports nothing heavy: the CLI reads it before it knows whether any file needs libcst.
"""

from __future__ import annotations

from collections.abc import Iterable

# other tool's code -> (the ARL code for the same construct, what both report)
ALIASES: dict[str, tuple[str, str]] = {
    "ASYNC105": ("ARL201", "an async function called without await (flake8-async: trio's only)"),
    "ASYNC200": ("ARL190", "a user-configured blocking call"),
    "ASYNC210": ("ARL120", "a synchronous HTTP call"),
    "ASYNC211": ("ARL120", "a urllib3 pool's request"),
    "ASYNC212": ("ARL120", "a call on a synchronous httpx client"),
    "ASYNC220": ("ARL111", "subprocess.Popen and friends"),
    "ASYNC221": ("ARL111", "subprocess.run and friends"),
    "ASYNC222": ("ARL111", "os.wait and friends"),
    "ASYNC230": ("ARL101", "open() and friends"),
    "ASYNC231": ("ARL101", "os.fdopen()"),
    "ASYNC232": ("ARL104", "a call on a synchronous file object"),
    "ASYNC240": ("ARL102", "os.path calls that touch the disk"),
    "ASYNC250": ("ARL112", "input()"),
    "ASYNC251": ("ARL110", "time.sleep()"),
    "ASYNC300": ("ARL204", "asyncio.create_task() without keeping the task"),
    "RUF006": ("ARL204", "asyncio.create_task() without keeping the task"),
}
PREFIXES = ("ASYNC", "RUF")


def aliases_of(code: str) -> set[str]:
    """The other tools' codes for ``code`` (``ARL101`` -> ``{"ASYNC230", "ASYNC231"}``)."""
    return {other for other, (arl, _) in ALIASES.items() if arl == code}


def is_foreign(code: str) -> bool:
    return code.upper().startswith(PREFIXES)


def translate(codes: Iterable[str]) -> tuple[set[str], dict[str, set[str]]]:
    """ARL codes and prefixes for a ``--select``/``--ignore`` list that may hold ASYNC codes.

    A foreign entry is a prefix too, as flake8 reads it (``ASYNC2`` is every ASYNC2xx code).
    Returns the translated set and, per foreign entry, the ARL codes it became (an empty set:
    no ARL rule checks that construct), for the note the CLI prints.
    """
    out: set[str] = set()
    read_as: dict[str, set[str]] = {}
    for code in codes:
        if not is_foreign(code):
            out.add(code)
            continue
        mapped = {arl for other, (arl, _) in ALIASES.items() if other.startswith(code.upper())}
        read_as[code] = mapped
        out |= mapped
    return out, read_as
