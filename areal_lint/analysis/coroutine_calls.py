# SPDX-License-Identifier: Apache-2.0
"""Which calls certainly make a coroutine, read by ARL2xx and ARL4xx (and how to await one).

A call makes a coroutine when it calls an ``async def`` of this file (a function, a method of
this class through ``self``), a method named like an async API (``agenerate``, ``ainvoke``...),
``create`` on an async SDK client, an asyncio or ``workflow_context`` coroutine function, or an
``AsyncRewardWrapper`` instance.
"""

from __future__ import annotations

import re

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.names import dotted, last, matches, self_attr

ASYNC_API = {
    "asyncio.sleep", "asyncio.wait_for", "asyncio.wait", "asyncio.to_thread",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
    "workflow_context.get_httpx_client", "workflow_context.get_aiohttp_session",
}  # fmt: skip
ASYNC_METHOD = re.compile(
    r"^a(generate|invoke|call|run|execute|step|reset|close|cleanup|create|complete|chat|embed)"
)
ASYNC_CLIENTS = {"AsyncOpenAI", "AsyncAzureOpenAI", "AsyncAnthropic", "ArealOpenAI"}
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
        if attr == "agenerate":
            return text or "agenerate"
        if attr == "create" and _async_client(ctx, base):
            return text or "create"
        if ASYNC_METHOD.match(attr) and attr not in ("append", "apply"):
            return text or attr
    if qualname and (qualname in ASYNC_API or matches(qualname, *ASYNC_API)):
        return text
    if qualname and last(qualname) in ("get_httpx_client", "get_aiohttp_session"):
        return text
    if is_wrapper_instance(ctx, func):
        return text
    return None


def _async_client(ctx: LintContext, expr: cst.BaseExpression) -> bool:
    while isinstance(expr, cst.Attribute) and self_attr(expr) is None:
        expr = expr.value
    receiver = ctx.receiver_type(expr)
    return receiver is not None and matches(receiver, *ASYNC_CLIENTS)


def is_wrapper_instance(ctx: LintContext, func: cst.BaseExpression) -> bool:
    """Whether ``func`` is bound to an ``AsyncRewardWrapper(...)``: calling it gives a coroutine."""
    receiver = ctx.receiver_type(func)
    return receiver is not None and matches(receiver, WRAPPER)


def add_await(node: cst.Call) -> cst.BaseExpression:
    return cst.Await(expression=node, whitespace_after_await=cst.SimpleWhitespace(" "))
