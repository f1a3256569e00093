# SPDX-License-Identifier: Apache-2.0
"""Which finding a node keeps when several rules report it: one finding per construct.

Several checks can fire on one node: an ``AsyncRewardWrapper`` instance called without
``await`` is also a coroutine that is never awaited, and one fix is enough. Two readers need
two shapes of the same decision:

* ``SPECIALISES`` names the pairs where one code is a more specific form of another, with the
  reason. These are the design decisions.
* ``RANK`` orders every code, so that any two codes that can meet on one node are ranked (a
  total order cannot contradict itself). On a node, the code ranked first wins. A test checks
  that ``RANK`` agrees with every pair in ``SPECIALISES``.

Codes reported on different nodes never compete: ARL305 is reported at the ``http_client``
argument, ARL304 at the client call, so ARL305/ARL306 win over ARL304 because their checks ask
for a transport that ARL304's check requires to be missing.
"""

from __future__ import annotations

from collections.abc import Iterable

_BUILTIN_BLOCKING = ("ARL101", "ARL102", "ARL103", "ARL104", "ARL105", "ARL110", "ARL111",
                     "ARL112", "ARL120", "ARL121", "ARL122", "ARL130", "ARL131", "ARL140")  # fmt: skip

# winner -> (losers, why the winner is the more specific finding)
SPECIALISES: dict[str, tuple[tuple[str, ...], str]] = {
    "ARL402": (
        ("ARL201", "ARL202", "ARL203"),
        "an AsyncRewardWrapper call is the reward case of a coroutine that is never awaited",
    ),
    "ARL404": (
        ("ARL205", "ARL403", "ARL303"),
        "an async def given to AsyncRewardWrapper is the wrapper case of offloading an async "
        "def; it is wrong whether or not it pickles and wherever the wrapper is built",
    ),
    "ARL403": (
        ("ARL303",),
        "a wrapper that cannot pickle its function fails at its first call, wherever it is built",
    ),
    "ARL205": (
        ("ARL201", "ARL202", "ARL203"),
        "to_thread(async_fn) is wrong even once awaited: the thread only creates a coroutine",
    ),
    "ARL305": (("ARL304",), "an optional transport is the half-done case of a missing one"),
    "ARL306": (("ARL304",), "a shared transport closed (async with, close()) is worse than none"),
    "ARL504": (
        ("ARL501", "ARL901"),
        "re-encoding the whole re-templated conversation is the multi-turn case of re-tokenizing "
        "a completion, and training the wrong ids outweighs the CPU the call costs",
    ),
    "ARL501": (
        ("ARL901",),
        "a tokenizer call whose ids are trained in place of the sampled ones is wrong, not only "
        "slow; using resp.output_tokens removes the call",
    ),
    **{
        code: (("ARL190",), "a built-in rule names the call more precisely than a user pattern")
        for code in _BUILTIN_BLOCKING
    },
}

# Best first. Each line says why its codes sit where they are.
RANK: tuple[str, ...] = (
    # Transport misuse, judged where the client is entered or the argument is passed; it outranks
    # a user pattern that also matches that call or argument.
    "ARL306", "ARL305",
    # Blocking calls the built-in rules recognise, then the user's configured ones: the user
    # said what the call is, so that beats every non-blocking code on the same call.
    *_BUILTIN_BLOCKING, "ARL190",
    # AsyncRewardWrapper specialisations (see SPECIALISES).
    "ARL402", "ARL404", "ARL403",
    # The call does nothing until awaited: that comes before what the callee would do.
    "ARL204", "ARL205", "ARL201", "ARL203",
    # A sync reward call: after the coroutine codes (awaiting is the fix when the callee is
    # async), before the construction codes (the reward must leave the loop either way).
    "ARL401",
    # Per-episode construction; a pool listed as heavy set-up is still a pool, a client or a
    # wrapper is judged as such before as heavy set-up.
    "ARL311", "ARL301", "ARL302", "ARL303", "ARL304", "ARL310",
    # Trajectories that will not train as sampled: judged on tokenizer calls and list
    # expressions, where only the opt-in CPU rule can also report.
    "ARL504", "ARL501", "ARL502", "ARL503",
    # Opt-in rules.
    "ARL901", "ARL902",
    # A stored coroutine never used is only known when the function ends; any code found on
    # the call itself says more about what is wrong.
    "ARL202",
)  # fmt: skip

_POSITION = {code: i for i, code in enumerate(RANK)}


def winner(codes: Iterable[str]) -> str:
    """The code a node keeps among those reported on it."""
    return min(codes, key=lambda code: (_POSITION.get(code, len(RANK)), code))
