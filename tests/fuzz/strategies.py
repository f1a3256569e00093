# SPDX-License-Identifier: Apache-2.0
"""Hostile inputs shared by the fuzz modules: JSON of every shape and near-valid bodies.

``near_valid(valid)`` takes a strategy of valid bodies and changes one thing at one place
(delete, retype, enlarge, add a key), and reports the path it changed, so a test can demand
that a 4xx names the field at fault.
"""

from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# Example counts for the ci profile; `make fuzz` multiplies them.
SCALE = 25 if os.environ.get("AREAL_FUZZ_PROFILE") == "fuzz" else 1


def examples(n: int) -> int:
    """``n`` examples under the ci profile, ``SCALE`` times as many under ``fuzz``."""
    return n * SCALE


NUMBERS = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63), 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324, 0.5]),
)
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "\u202e", "😀" * 3, "\ud800", "null", "<|im_end|>", "{{x}}"]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=20,
)
# A value that breaks a field: wrong type, wrong sign, not finite, empty, huge, nested.
HOSTILE = st.one_of(
    SCALARS,
    st.just("x" * 20_000),
    st.just(list(range(5_000))),
    st.builds(lambda v: [v], SCALARS),
    st.builds(lambda v: {"": v}, SCALARS),
    JSON,
)


def encode(value: Any) -> bytes:
    """JSON bytes as a lax client sends them: NaN/Infinity written as bare words."""
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


@dataclass
class Mutation:
    """What ``near_valid`` did: ``kind`` at ``path`` (keys and indices from the top)."""

    kind: str
    path: tuple[Any, ...]
    body: Any

    @property
    def names(self) -> set[str]:
        """The key names along the path: one of them must appear in a 4xx's message."""
        return {p for p in self.path if isinstance(p, str)}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def near_valid(draw: st.DrawFn, valid: st.SearchStrategy[dict[str, Any]]) -> Mutation:
    """A valid body from ``valid`` with exactly one thing changed."""
    body = copy.deepcopy(draw(valid))
    paths = _paths(body)
    kind = draw(st.sampled_from(["replace", "delete", "extra", "wrap"] if paths else ["extra"]))
    if kind == "extra":
        where = draw(st.sampled_from([p for p in [(), *paths] if _is_dict(body, p)]))
        key = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in _at(body, where)))
        _at(body, where)[key] = draw(JSON)
        return Mutation(kind, (*where, key), body)
    path = draw(st.sampled_from(paths))
    parent, last = _at(body, path[:-1]), path[-1]
    if kind == "delete":
        del parent[last]
    elif kind == "wrap":
        parent[last] = [parent[last]]
    else:
        parent[last] = draw(HOSTILE)
    return Mutation(kind, path, body)


def _at(body: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        body = body[p]
    return body


def _is_dict(body: Any, path: tuple[Any, ...]) -> bool:
    return isinstance(_at(body, path), dict)
