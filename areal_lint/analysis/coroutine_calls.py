# SPDX-License-Identifier: Apache-2.0
"""Which calls certainly make a coroutine, read by ARL2xx and ARL4xx (and how to await one).

A call makes a coroutine when it calls an ``async def`` of this file (a function, a method of
this class through ``self``), a method named like an async API (``agenerate``, ``ainvoke``...),
a coroutine method of a known async client (``analysis.async_clients``: httpx, aiohttp, the
OpenAI and Anthropic SDKs, ``ArealOpenAI``), an asyncio or ``workflow_context`` coroutine
function, or an ``AsyncRewardWrapper`` instance.
"""

from __future__ import annotations

import re

import libcst as cst

from areal_lint.analysis.async_clients import (
    ASYNC_METHOD_PREFIXES,
    METHOD_NAMES,
    RUNTIME_COROUTINES,
    is_coroutine_method,
)
from areal_lint.context import LintContext
from areal_lint.names import dotted, last, matches, self_attr

ASYNC_API = {
    "asyncio.sleep", "asyncio.wait_for", "asyncio.wait", "asyncio.to_thread",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
}  # fmt: skip
ASYNC_METHOD = re.compile("^(" + "|".join(ASYNC_METHOD_PREFIXES) + ")")
WRAPPER = "AsyncRewardWrapper"


def coroutine_name(ctx: LintContext, node: cst.Call) -> str | None:
    """A printable name when ``node`` certainly produces a coroutine, else None."""
    func = node.func
    qualname = ctx.qualname(node)
    text = dotted(func)
    if (
        isinstance(func, cst.Name)
        and ctx.index.is_coroutine_function(func.value)
        and func.value not in ctx.frame.locals
    ):
        return func.value
    if isinstance(func, cst.Attribute):
        base = func.value
        attr = func.attr.value
        if (
            isinstance(base, cst.Name)
            and base.value in ("self", "cls")
            and ctx.index.is_coroutine_function(f"{ctx.current_class()}.{attr}")
        ):
            return f"self.{attr}"
        if isinstance(base, cst.Name) and ctx.index.is_coroutine_function(f"{base.value}.{attr}"):
            return f"{base.value}.{attr}"
        if ASYNC_METHOD.match(attr):
            return text or attr
        if attr in METHOD_NAMES and client_method(ctx, func):
            return text or attr
    if qualname and (qualname in ASYNC_API or last(qualname) in RUNTIME_COROUTINES):
        return text
    if is_wrapper_instance(ctx, func):
        return text
    return None


def client_method(ctx: LintContext, func: cst.Attribute) -> bool:
    """``client.post``, ``self.client.chat.completions.create``, ``resp.json`` on a receiver
    whose type the async-client table lists with that coroutine method."""
    expr = func.value
    depth = 0
    while isinstance(expr, cst.Attribute) and self_attr(expr) is None:
        expr = expr.value
        depth += 1
    if not isinstance(expr, cst.Name | cst.Attribute):
        return False
    return is_coroutine_method(ctx.receiver_type(expr), func.attr.value, depth)


def is_wrapper_instance(ctx: LintContext, func: cst.BaseExpression) -> bool:
    """Whether ``func`` is bound to an ``AsyncRewardWrapper(...)``: calling it gives a coroutine."""
    receiver = ctx.receiver_type(func)
    return receiver is not None and matches(receiver, WRAPPER)


def add_await(node: cst.Call) -> cst.BaseExpression:
    return cst.Await(expression=node, whitespace_after_await=cst.SimpleWhitespace(" "))
