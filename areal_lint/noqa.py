# SPDX-License-Identifier: Apache-2.0
"""``# noqa`` comments for the standalone CLI (flake8 handles them itself in plugin mode)."""

from __future__ import annotations

import io
import re
import tokenize

from areal_lint.aliases import aliases_of

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


def noqa_lines(source: str) -> dict[int, set[str] | None]:
    """Line -> codes silenced there (None means a bare ``# noqa``: everything)."""
    out: dict[int, set[str] | None] = {}
    if "noqa" not in source.lower():
        return out
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = _NOQA.search(tok.string)
        if match is None:
            continue
        codes = match.group("codes")
        line = tok.start[0]
        if codes is None:
            out[line] = None
        elif out.get(line, set()) is not None:
            out[line] = (out.get(line) or set()) | {
                c.upper() for c in re.split(r"[,\s]+", codes) if c
            }
    return out


def silenced(noqa: dict[int, set[str] | None], line: int, code: str) -> bool:
    """Whether a ``# noqa`` on ``line`` covers ``code``: by its own code, or by flake8-async's
    or ruff's code for the same check (``# noqa: ASYNC230`` silences ARL101; see aliases.py)."""
    if line not in noqa:
        return False
    codes = noqa[line]
    return codes is None or code in codes or bool(codes & aliases_of(code))
