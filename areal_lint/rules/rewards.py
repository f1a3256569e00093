# SPDX-License-Identifier: Apache-2.0
"""ARL4xx: reward functions called in ways that block the loop or break in a process pool."""

from __future__ import annotations

import re
from functools import partial

import libcst as cst

from areal_lint.analysis.coroutine_calls import (
    WRAPPER,
    add_await,
    coroutine_name,
    is_wrapper_instance,
)
from areal_lint.analysis.coroutine_flow import Coroutine, CoroutineTracker, Use
from areal_lint.context import LintContext
from areal_lint.names import last, matches, self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Reporter, Rule, check, report

REWARD_MODULE_HINTS = ("reward", "rm_hub", "verifier", "evaluator")
# Names of things around a reward rather than reward functions: text helpers such as
# parse_judge_result() or judge_question(), pickers such as choose_reward_worker(), values such
# as reward_metrics, setters such as session.set_reward(), already-judged verdicts such as
# score_verdicts(), schedules such as _verify_due() (verifiers, verl, AReaL's data proxy).
NOT_A_REWARD = re.compile(
    r"^_*(parse|format|extract|render|log|print|strip|clean|choose|select|collect|load|save"
    r"|set|get|add|record|update|is|has|should)_"
    r"|_(worker|workers|manager|router|model|config|client|server|address|url|pool|loop"
    r"|tokenizer|metrics|stats|keys|dict|list|tensor|tensors|shape|type|question|response"
    r"|prompt|text|messages|due|verdict|verdicts)$"
)


class SyncRewardCall(Rule):
    """ARL401 synchronous reward function called directly in async code.

    What: a reward-like function called directly, without ``await`` or offloading. Two signals
    are needed among: a name like ``*_reward``/``score``/``verify``/``judge``/``evaluate``, a
    reward/verifier/evaluator module, a result assigned to a reward-like name; the function
    also given to ``AsyncRewardWrapper`` is enough alone. Text helpers (``parse_*``), pickers
    (``choose_*_worker``) and Ray ``.remote()`` submissions are not reward calls.
    Why: rewards (math verification, code execution) are CPU-heavy and can hang; on the loop
    they stall every episode and have no timeout.
    Example: ``reward = math_reward_fn(completion, answer)`` in ``arun_episode``.
    Fix: ``self.reward_fn = AsyncRewardWrapper(math_reward_fn)`` in ``__init__``, then
    ``await self.reward_fn(...)`` (unsafe autofix: ``await asyncio.to_thread(fn, ...)``).
    """

    code = "ARL401"
    message = "reward function {name}() runs on the event loop with no timeout; wrap it in AsyncRewardWrapper (built in __init__) and await it"
    fix = "unsafe"


class UnawaitedReward(Rule):
    """ARL402 ``AsyncRewardWrapper`` called without ``await``.

    What: an ``AsyncRewardWrapper`` instance called and not awaited.
    Why: the call returns a coroutine; the reward is never computed, and ``float(coro)`` fails
    later far from the cause.
    Example: ``reward = self.async_reward_fn(prompt, completion)``.
    Fix: ``reward = await self.async_reward_fn(prompt, completion)`` (unsafe autofix).
    """

    code = "ARL402"
    message = "{name}() is an AsyncRewardWrapper call that is never awaited; add await"
    fix = "unsafe"


class UnpicklableReward(Rule):
    """ARL403 unpicklable reward function given to ``AsyncRewardWrapper``.

    What: a ``lambda`` or a function defined inside another function passed to
    ``AsyncRewardWrapper``.
    Why: the process pool must pickle the function; AReaL fails only at the first call, after
    retries.
    Example: ``AsyncRewardWrapper(lambda p, c, *a, **k: float(c == k["answer"]))``.
    Fix: define the function at module level (``functools.partial`` of one is fine).
    """

    code = "ARL403"
    message = (
        "{name} cannot be pickled for AsyncRewardWrapper's process pool; define it at module level"
    )


class AsyncRewardFunction(Rule):
    """ARL404 ``async def`` given to ``AsyncRewardWrapper``.

    What: ``AsyncRewardWrapper(f)`` where ``f`` is an ``async def`` in this file.
    Why: the worker calls ``f`` and gets a coroutine object back instead of a float.
    Example: ``AsyncRewardWrapper(self.judge)`` with ``async def judge``.
    Fix: await the async reward directly, or make it synchronous.
    """

    code = "ARL404"
    message = "{name} is an async def; AsyncRewardWrapper needs a synchronous function (await async rewards directly)"


def _reward_signals(ctx: LintContext, node: cst.Call, qualname: str | None) -> bool:
    func = node.func
    name = (
        func.value
        if isinstance(func, cst.Name)
        else func.attr.value
        if isinstance(func, cst.Attribute)
        else ""
    )
    if qualname and (
        qualname in ctx.options.reward_functions or name in ctx.options.reward_functions
    ):
        return True
    if name == "remote":  # a Ray submission returns an ObjectRef at once
        return False
    score = -1 if NOT_A_REWARD.search(name) else 0
    if ctx.options.reward_pattern.search(name):
        score += 1
    if (
        qualname
        and "." in qualname
        and any(h in qualname.rsplit(".", 1)[0] for h in REWARD_MODULE_HINTS)
    ):
        score += 1
    if qualname and qualname.startswith(("areal.reward", "areal_runtime.reward")):
        score += 1
    cls = ctx.current_class()
    if cls and self_attr(func) in ctx.index.wrapped_reward_args.get(cls, set()):
        score += 2
    target = ctx.assign_target_of.get(id(node))
    if (
        isinstance(target, cst.Name)
        and ctx.options.reward_pattern.search(target.value)
        and not NOT_A_REWARD.search(target.value)
    ):
        score += 1
    return score >= 2


def _is_async_def(ctx: LintContext, name: str) -> bool:
    """A module-level ``async def`` or one nested in the current function."""
    info = ctx.frame.info
    return ctx.index.is_async_function(name) or (
        info is not None and ctx.index.is_async_function(f"{info.qualname}.<locals>.{name}")
    )


def _pickled(node: cst.Call) -> bool:
    """False for areal_runtime's ``mode="thread"``/``"inline"``, which never pickle the function."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mode":
            return not (
                isinstance(arg.value, cst.SimpleString)
                and arg.value.evaluated_value in ("thread", "inline")
            )
    return True


def _wrapped_function(ctx: LintContext, call: cst.Call) -> cst.BaseExpression | None:
    """The function given to ``AsyncRewardWrapper(fn, ...)``, or None for another call."""
    if matches(ctx.qualname(call), WRAPPER) and call.args:
        return call.args[0].value
    return None


@check("ARL401")
def sync_reward_call(ctx: LintContext, call: cst.Call) -> Hit | None:
    frame = ctx.frame
    if not (frame.is_async or frame.is_episode) or ctx.is_awaited(call):
        return None
    qualname = ctx.qualname(call)
    if matches(qualname, WRAPPER) or ctx.is_offload_argument(call):
        return None  # building the wrapper, or handing the function to a worker, is the fix
    if is_wrapper_instance(ctx, call.func):
        return None  # a wrapper call is a coroutine (ARL402 when not awaited)
    if isinstance(call.func, cst.Name) and ctx.index.is_async_function(call.func.value):
        return None
    if _reward_signals(ctx, call, qualname):
        name = qualname or last(cst.Module(body=[]).code_for_node(call.func))
        return Hit({"name": name}, rewrite=_to_thread, needs=("asyncio",))
    return None


@check("ARL402")
def unawaited_reward(ctx: LintContext, node: cst.CSTNode, coro: Coroutine) -> Hit | None:
    """A wrapper call never awaited; ``_ = wrapper(...)`` is left to ARL201 (a chosen discard)."""
    if coro.use is Use.STATEMENT:
        return Hit({"name": coro.name}, rewrite=add_await)
    if coro.use in (Use.VALUE, Use.READ, Use.UNUSED):
        return Hit({"name": coro.name})
    return None


@check("ARL403")
def unpicklable_reward(ctx: LintContext, call: cst.Call) -> Hit | None:
    arg = _wrapped_function(ctx, call)
    if arg is None or not _pickled(call):
        return None
    if isinstance(arg, cst.Lambda):
        return Hit({"name": "a lambda"})
    if isinstance(arg, cst.Name) and arg.value in ctx.nested_functions():
        return Hit({"name": f"nested function {arg.value}"})
    return None


@check("ARL404")
def async_reward_function(ctx: LintContext, call: cst.Call) -> Hit | None:
    arg = _wrapped_function(ctx, call)
    if isinstance(arg, cst.Name) and _is_async_def(ctx, arg.value):
        return Hit({"name": arg.value})
    attr = self_attr(arg)
    if attr and ctx.index.is_async_function(f"{ctx.current_class()}.{attr}"):
        return Hit({"name": f"self.{attr}"})
    return None


def _wrapper_call_name(ctx: LintContext, call: cst.Call) -> str | None:
    """The callee's name when ``call`` calls an ``AsyncRewardWrapper`` instance."""
    if not is_wrapper_instance(ctx, call.func):
        return None
    return coroutine_name(ctx, call)


def _judge(ctx: LintContext, reporter: Reporter, coro: Coroutine) -> None:
    report(ctx, reporter, unawaited_reward, coro.node, coro)


class RewardsVisitor(FamilyVisitor):
    """Reward functions: called on the loop, wrapped wrongly, or wrapper calls never awaited."""

    def __init__(self, ctx: LintContext, reporter: Reporter) -> None:
        super().__init__(ctx, reporter)
        # a function of ctx and reporter, not a bound method: no cycle (see ``report``)
        self.wrapper_calls = CoroutineTracker(
            ctx, _wrapper_call_name, partial(_judge, ctx, reporter), returns_are_uses=True
        )

        self.decorators: set[int] = set()

    def visitors(self) -> tuple[object, ...]:
        return (self, self.wrapper_calls)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self.decorators.add(id(node.decorator))

    def visit_Call(self, node: cst.Call) -> None:
        self.run(async_reward_function, node)
        self.run(unpicklable_reward, node)
        if id(node) not in self.decorators:  # @reward(weight=1.0) registers, it does not score
            self.run(sync_reward_call, node)


def _to_thread(node: cst.Call) -> cst.BaseExpression:
    args = [cst.Arg(node.func), *node.args]
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return cst.Await(
        expression=cst.Call(func=cst.parse_expression("asyncio.to_thread"), args=args),
        whitespace_after_await=cst.SimpleWhitespace(" "),
    )


RULES = [SyncRewardCall, UnawaitedReward, UnpicklableReward, AsyncRewardFunction]
