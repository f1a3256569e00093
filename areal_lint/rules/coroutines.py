# SPDX-License-Identifier: Apache-2.0
"""ARL2xx: coroutines that are never awaited and tasks that are lost (async bodies)."""

from __future__ import annotations

import re

import libcst as cst

from areal_lint.names import dotted, last, matches, self_attr
from areal_lint.rules.base import Rule

ASYNC_API = {
    "asyncio.sleep", "asyncio.wait_for", "asyncio.wait", "asyncio.to_thread",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
    "workflow_context.get_httpx_client", "workflow_context.get_aiohttp_session",
}  # fmt: skip
ASYNC_METHOD = re.compile(
    r"^a(generate|invoke|call|run|execute|step|reset|close|cleanup|create|complete|chat|embed)"
)
ASYNC_CLIENTS = {"AsyncOpenAI", "AsyncAzureOpenAI", "AsyncAnthropic", "ArealOpenAI"}
CONSUMERS = {"float", "int", "str", "bool", "len", "print", "repr", "json.dumps", "torch.tensor"}
TASK_FACTORIES = {"asyncio.create_task", "asyncio.ensure_future"}
WRAPPER = "AsyncRewardWrapper"


class UnawaitedCoroutine(Rule):
    """ARL201 coroutine called and never awaited.

    What: a call that returns a coroutine (a same-file ``async def``, ``engine.agenerate``,
    ``asyncio.sleep``, an async client's ``create``...) used as a bare statement or assigned to
    ``_``. An ``async def`` that contains ``yield`` is an async generator, not a coroutine, and
    is never reported by the ARL2xx rules.
    Why: the coroutine object is created and dropped; the work never happens and Python only
    warns at garbage collection, far from the bug.
    Example: ``self.client.close()`` where ``close`` is ``async def``.
    Fix: ``await`` it (unsafe autofix: adding ``await`` changes when the code runs).
    """

    code = "ARL201"
    message = "{name}() returns a coroutine that is never awaited; add await"
    fix = "unsafe"


class UnusedCoroutine(Rule):
    """ARL202 coroutine stored in a variable that is never used.

    What: ``x = coro()`` and ``x`` is never read again in the function.
    Why: the coroutine never runs.
    Example: ``resp = engine.agenerate(req)`` followed by nothing that uses ``resp``.
    Fix: ``resp = await engine.agenerate(req)``; prefix the name with ``_`` only to discard on
    purpose (and then close it).
    """

    code = "ARL202"
    message = "{name} holds a coroutine that is never awaited or used; await it"


class CoroutineUsedAsValue(Rule):
    """ARL203 coroutine used as if it were its result.

    What: a coroutine (a call or a name bound to one and not yet awaited) used in a condition,
    arithmetic, as an argument of ``float``/``len``/``print``..., or with an attribute access
    such as ``resp.output_tokens``.
    Why: the code reads the coroutine object instead of the result; a forgotten ``await`` on
    ``engine.agenerate`` is the most common case.
    Example: ``resp = engine.agenerate(req); tokens = resp.output_tokens``.
    Fix: ``resp = await engine.agenerate(req)``.
    """

    code = "ARL203"
    message = "{name} is a coroutine used as a value; await it first"


class LostTask(Rule):
    """ARL204 task created without keeping a reference.

    What: ``asyncio.create_task(...)``/``ensure_future`` as a bare statement or assigned to ``_``.
    Why: the event loop keeps only a weak reference; the task can be garbage-collected
    mid-flight and its exceptions are lost.
    Example: ``asyncio.create_task(self.log(data))``.
    Fix: keep it (``self._tasks.add(t); t.add_done_callback(self._tasks.discard)``) or use a
    ``TaskGroup``.
    """

    code = "ARL204"
    message = "the task from {name}() is not referenced and may be garbage-collected; keep a reference or use a TaskGroup"


class WrongOffloadTarget(Rule):
    """ARL205 async function passed to a thread or executor.

    What: ``run_in_executor(None, afunc)`` or ``asyncio.to_thread(afunc)`` where ``afunc`` is an
    ``async def`` in this file.
    Why: the thread only creates the coroutine object and returns it; nothing runs.
    Example: ``await asyncio.to_thread(self.fetch)`` with ``async def fetch``.
    Fix: ``await self.fetch()``.
    """

    code = "ARL205"
    message = "{name} is an async def; offloading it to a thread only creates a coroutine: await it directly"


def coroutine_name(v, node: cst.Call) -> str | None:
    """A printable name when ``node`` certainly produces a coroutine, else None."""
    func = node.func
    qualname = v.resolve(func)
    text = dotted(func)
    if (
        isinstance(func, cst.Name)
        and v.index.is_coroutine_function(func.value)
        and func.value not in _shadowed(v)
    ):
        return func.value
    if isinstance(func, cst.Attribute):
        base = func.value
        attr = func.attr.value
        if (
            isinstance(base, cst.Name)
            and base.value in ("self", "cls")
            and v.index.is_coroutine_function(f"{v.current_class()}.{attr}")
        ):
            return f"self.{attr}"
        if isinstance(base, cst.Name) and v.index.is_coroutine_function(f"{base.value}.{attr}"):
            return f"{base.value}.{attr}"
        if attr == "agenerate":
            return text or "agenerate"
        if attr == "create" and _async_client(v, base):
            return text or "create"
        if ASYNC_METHOD.match(attr) and attr not in ("append", "apply"):
            return text or attr
    if qualname and (qualname in ASYNC_API or matches(qualname, *ASYNC_API)):
        return text
    if qualname and last(qualname) in ("get_httpx_client", "get_aiohttp_session"):
        return text
    if _is_wrapper_instance(v, func):
        return text
    return None


def _shadowed(v) -> set[str]:
    return v.frame.locals


def _async_client(v, expr: cst.BaseExpression) -> bool:
    while isinstance(expr, cst.Attribute) and self_attr(expr) is None:
        expr = expr.value
    receiver = v.receiver_type(expr)
    return receiver is not None and matches(receiver, *ASYNC_CLIENTS)


def _is_wrapper_instance(v, func: cst.BaseExpression) -> bool:
    receiver = v.receiver_type(func)
    return receiver is not None and matches(receiver, WRAPPER)


def check(v, node: cst.Call) -> None:
    if not v.frame.is_async:
        return
    qualname = v.resolve(node.func)
    if qualname in TASK_FACTORIES and id(node) in v.statement_calls:
        v.report(LostTask, node, name=qualname)
        return
    if qualname == "asyncio.to_thread" or (
        isinstance(node.func, cst.Attribute) and node.func.attr.value == "run_in_executor"
    ):
        position = 0 if qualname == "asyncio.to_thread" else 1
        if len(node.args) > position:
            target = node.args[position].value
            name = _async_target(v, target)
            if name:
                v.report(WrongOffloadTarget, node, name=name)
    if v.is_awaited(node):
        return
    name = coroutine_name(v, node)
    if name is None:
        return
    if _is_wrapper_instance(v, node.func):
        from areal_lint.rules.rewards import UnawaitedReward

        if id(node) in v.statement_calls or _in_value_context(v, node):
            v.report(UnawaitedReward, node, rewrite=_add_await, name=name)
        return
    if id(node) in v.statement_calls:
        v.report(UnawaitedCoroutine, node, rewrite=_add_await, name=name)
    elif _in_value_context(v, node):
        v.report(CoroutineUsedAsValue, node, name=f"{name}()")


def _async_target(v, expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name) and v.index.is_async_function(expr.value):
        return expr.value
    attr = self_attr(expr)
    if attr is not None:
        cls = v.current_class()
        if cls and v.index.is_async_function(f"{cls}.{attr}"):
            return f"self.{attr}"
    return None


def _in_value_context(v, node: cst.Call) -> bool:
    return id(node) in v.value_calls


def _add_await(node: cst.Call) -> cst.BaseExpression:
    return cst.Await(expression=node, whitespace_after_await=cst.SimpleWhitespace(" "))


# ---- stored coroutines: ARL201 for `_ = coro()`, ARL202 unused, ARL203 used as value ----------
def on_assign(v, node: cst.Assign) -> None:
    if not v.frame.is_async or not isinstance(node.value, cst.Call) or v.is_awaited(node.value):
        return
    if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
        return
    target = node.targets[0].target.value
    qualname = v.resolve(node.value.func)
    if target == "_":
        if qualname in TASK_FACTORIES:
            v.report(LostTask, node.value, name=qualname)
        elif (name := coroutine_name(v, node.value)) is not None:
            v.report(UnawaitedCoroutine, node.value, name=name)
        return
    name = coroutine_name(v, node.value)
    if name is not None and not target.startswith("_"):  # `_x = coro()` is an explicit discard
        is_reward = _is_wrapper_instance(v, node.value.func)
        v.frame.coroutines[target] = [node, False, is_reward, name]
    else:
        v.frame.coroutines.pop(target, None)


def on_name(v, node: cst.Name) -> None:
    entry = v.frame.coroutines.get(node.value)
    if entry is None or entry[0].targets[0].target is node:
        return
    entry[1] = True
    if id(node) in v.awaited:
        v.frame.coroutines.pop(node.value)
        return
    if id(node) in v.value_names:
        from areal_lint.rules.rewards import UnawaitedReward

        if entry[2]:
            v.report(UnawaitedReward, node, name=entry[3])
        else:
            v.report(CoroutineUsedAsValue, node, name=node.value)
        v.frame.coroutines.pop(node.value)


def on_leave_function(v, frame) -> None:
    from areal_lint.rules.rewards import UnawaitedReward

    for name, (assign, used, is_reward, call) in frame.coroutines.items():
        if used or name.startswith("_"):
            continue
        if is_reward:
            v.report(UnawaitedReward, assign.value, name=call)
        else:
            v.report(UnusedCoroutine, assign.value, name=name)


RULES = [UnawaitedCoroutine, UnusedCoroutine, CoroutineUsedAsValue, LostTask, WrongOffloadTarget]
