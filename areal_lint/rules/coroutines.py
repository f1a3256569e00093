# SPDX-License-Identifier: Apache-2.0
"""ARL2xx: coroutines that are never awaited and tasks that are lost (async bodies)."""

from __future__ import annotations

from functools import partial

import libcst as cst

from areal_lint.analysis.coroutine_calls import WRAPPER, add_await, coroutine_name
from areal_lint.analysis.coroutine_flow import Coroutine, CoroutineTracker, Use
from areal_lint.context import LintContext
from areal_lint.names import dotted, matches, self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Reporter, Rule, check, report

TASK_FACTORIES = {"asyncio.create_task", "asyncio.ensure_future"}
# A client built per episode (or per call) and a call on it left un-awaited are two defects: the
# await makes the call run, and the client still has to move out of the episode.
_ON_A_CLIENT_BUILT_HERE = {
    code: "a call on a client built per episode or per call is a second defect: awaiting it "
    "does not move the client out"
    for code in ("ARL301", "ARL302", "ARL304")
}
# An event loop, by what made it or its annotation: ``loop.create_task`` keeps no reference either.
EVENT_LOOPS = {
    "asyncio.get_running_loop", "asyncio.get_event_loop", "asyncio.new_event_loop",
    "asyncio.AbstractEventLoop", "asyncio.BaseEventLoop", "asyncio.EventLoop",
    "asyncio.events.AbstractEventLoop", "asyncio.base_events.BaseEventLoop",
    "uvloop.new_event_loop", "uvloop.Loop",
}  # fmt: skip
# An untyped receiver named like a loop (``loop``, ``self._loop``) is one: TaskGroups and nurseries
# are named ``tg``, ``group``, ``nursery``, and they keep their tasks.
LOOP_NAMES = {"loop", "_loop", "event_loop", "_event_loop", "ev_loop"}


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
    also_with = _ON_A_CLIENT_BUILT_HERE
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
    also_with = _ON_A_CLIENT_BUILT_HERE
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
    also_with = _ON_A_CLIENT_BUILT_HERE
    message = "{name} is a coroutine used as a value; await it first"


class LostTask(Rule):
    """ARL204 task created without keeping a reference.

    What: ``asyncio.create_task(...)``/``ensure_future``, or ``create_task`` on an event loop
    (``loop.create_task(...)`` where ``loop`` came from ``asyncio.get_running_loop()``/
    ``get_event_loop()``, is annotated as one, or is named ``loop``/``self._loop``;
    ``asyncio.get_running_loop().create_task(...)``), as a bare statement or assigned to ``_``.
    A ``TaskGroup``'s ``tg.create_task`` keeps its tasks and is not reported.
    Why: the event loop keeps only a weak reference; the task can be garbage-collected
    mid-flight and its exceptions are lost.
    Example: ``asyncio.create_task(self.log(data))``;
    ``asyncio.get_running_loop().create_task(self.flush())``.
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


# ---- one check per code -----------------------------------------------------------------------
@check("ARL201")
def unawaited_coroutine(ctx: LintContext, node: cst.CSTNode, coro: Coroutine) -> Hit | None:
    if coro.use is Use.STATEMENT:
        return Hit({"name": coro.name}, rewrite=add_await)
    if coro.use is Use.DISCARDED:  # no fix: `_ = await coro()` would keep a pointless `_`
        return Hit({"name": coro.name})
    return None


@check("ARL202")
def unused_coroutine(ctx: LintContext, node: cst.CSTNode, coro: Coroutine) -> Hit | None:
    if coro.use is Use.UNUSED:
        return Hit({"name": coro.target or coro.name})
    return None


@check("ARL203")
def coroutine_used_as_value(ctx: LintContext, node: cst.CSTNode, coro: Coroutine) -> Hit | None:
    if coro.use is Use.VALUE:
        return Hit({"name": f"{coro.name}()"})
    if coro.use is Use.READ:
        return Hit({"name": coro.target or coro.name})
    return None


@check("ARL204")
def lost_task(ctx: LintContext, call: cst.Call) -> Hit | None:
    if not (ctx.is_statement(call) or ctx.is_discarded(call)):
        return None
    qualname = ctx.qualname(call)
    if qualname in TASK_FACTORIES:
        return Hit({"name": qualname})
    name = _loop_create_task(ctx, call.func)
    return Hit({"name": name}) if name else None


def _loop_create_task(ctx: LintContext, func: cst.BaseExpression) -> str | None:
    """``loop.create_task`` (printable) when ``func`` is ``create_task`` of an event loop."""
    if not (isinstance(func, cst.Attribute) and func.attr.value == "create_task"):
        return None
    loop = func.value
    if isinstance(loop, cst.Call):  # asyncio.get_running_loop().create_task(...)
        made = ctx.resolve(loop.func)
        return f"{dotted(loop.func)}().create_task" if made in EVENT_LOOPS else None
    if not (isinstance(loop, cst.Name) or self_attr(loop) is not None):
        return None
    kind = ctx.receiver_type(loop)
    named = loop.value if isinstance(loop, cst.Name) else self_attr(loop)
    if kind in EVENT_LOOPS or (kind is None and named in LOOP_NAMES):
        return dotted(func)
    return None


@check("ARL205")
def wrong_offload_target(ctx: LintContext, call: cst.Call) -> Hit | None:
    qualname = ctx.qualname(call)
    if qualname == "asyncio.to_thread" or matches(qualname, WRAPPER):
        position = 0  # AsyncRewardWrapper runs its function in a worker, like to_thread
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "run_in_executor":
        position = 1
    else:
        return None
    if len(call.args) > position:
        name = _async_target(ctx, call.args[position].value)
        if name:
            return Hit({"name": name})
    return None


def _async_target(ctx: LintContext, expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name) and ctx.index.is_async_function(expr.value):
        return expr.value
    attr = self_attr(expr)
    if attr is not None:
        cls = ctx.current_class()
        if cls and ctx.index.is_async_function(f"{cls}.{attr}"):
            return f"self.{attr}"
    return None


def _judge(ctx: LintContext, reporter: Reporter, coro: Coroutine) -> None:
    for fn in (unawaited_coroutine, unused_coroutine, coroutine_used_as_value):
        report(ctx, reporter, fn, coro.node, coro)


class CoroutinesVisitor(FamilyVisitor):
    """Async bodies: coroutines that never run, tasks that may vanish, async defs in threads."""

    def __init__(self, ctx: LintContext, reporter: Reporter) -> None:
        super().__init__(ctx, reporter)
        # a function of ctx and reporter, not a bound method: no cycle (see ``report``)
        self.coroutines = CoroutineTracker(ctx, coroutine_name, partial(_judge, ctx, reporter))

    def visitors(self) -> tuple[object, ...]:
        return (self, self.coroutines)

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.frame.is_async:
            self.run(lost_task, node)
            self.run(wrong_offload_target, node)


RULES = [UnawaitedCoroutine, UnusedCoroutine, CoroutineUsedAsValue, LostTask, WrongOffloadTarget]
