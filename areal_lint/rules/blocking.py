# SPDX-License-Identifier: Apache-2.0
"""ARL1xx: blocking calls on the event loop (any async body, and sync helpers of episodes)."""

from __future__ import annotations

import fnmatch

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.names import last, matches, self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Rule, check

OPEN_CALLS = {"builtins.open", "io.open", "os.fdopen", "codecs.open"}
TEMPFILE = {
    "tempfile.TemporaryFile",
    "tempfile.NamedTemporaryFile",
    "tempfile.SpooledTemporaryFile",
}
FS_CALLS = {
    "os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rename", "os.replace", "os.listdir",
    "os.scandir", "os.stat", "os.walk", "os.rmdir", "os.path.exists", "os.path.isfile",
    "os.path.isdir", "os.path.getsize", "os.path.getmtime", "shutil.copy", "shutil.copyfile",
    "shutil.copytree", "shutil.rmtree", "shutil.move", "glob.glob",
}  # fmt: skip
PATH_METHODS = {
    "read_text", "read_bytes", "write_text", "write_bytes", "open", "touch", "mkdir", "exists",
    "unlink", "glob", "rglob", "iterdir", "is_file", "is_dir", "stat", "rmdir",
}  # fmt: skip
SERIALIZE = {"torch.load", "torch.save", "pickle.load", "pickle.dump", "numpy.load", "numpy.save",
             "np.load", "np.save", "json.load", "json.dump", "yaml.safe_load", "yaml.load"}  # fmt: skip
SUBPROCESS = {"os.system", "os.popen", "os.wait", "os.waitpid", "os.wait3", "os.wait4", "os.waitid",
              "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.Popen",
              "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"}  # fmt: skip
HTTP_FUNCS = {"urllib.request.urlopen"}
HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream"}
SYNC_CLIENTS = {"requests.Session", "httpx.Client", "urllib3.PoolManager"}
SYNC_LLM = {"openai.OpenAI", "openai.AzureOpenAI", "anthropic.Anthropic"}
REENTRY = {"asyncio.run", "ray.get"}
BLOCKING_ENGINE = {
    "wait",
    "wait_for_task",
    "rollout_batch",
    "prepare_batch",
    "pause",
    "resume",
    "generate",
}


class BlockingOpen(Rule):
    """ARL101 blocking file open in async code.

    What: ``open()``, ``io.open``, ``os.fdopen``, ``codecs.open`` or a ``tempfile`` file opened in
    an ``async def`` (or a sync helper an episode calls).
    Why: every episode shares one event loop; a disk read blocks all rollouts and the engine's
    own HTTP calls while it waits.
    Example: ``async def arun_episode(self, engine, data): text = open(path).read()``
    Fix: ``async with aiofiles.open(path) as f: text = await f.read()``, or
    ``text = await asyncio.to_thread(Path(path).read_text)``.
    """

    code = "ARL101"
    message = "{name}() blocks the event loop; use aiofiles.open or await asyncio.to_thread(...)"


class BlockingFilesystem(Rule):
    """ARL102 blocking filesystem operation in async code.

    What: ``os.makedirs``, ``os.listdir``, ``shutil.*``, ``os.path.exists`` or ``pathlib.Path``
    I/O methods (``read_text``, ``mkdir``, ``exists``...) in async code.
    Why: filesystem calls block the shared event loop; on network filesystems for a long time.
    Example: ``if os.path.exists(cache): ...`` inside ``arun_episode``.
    Fix: do it once in ``__init__``, or ``await asyncio.to_thread(os.path.exists, cache)``.
    Pure path arithmetic (``os.path.join``, ``Path / "x"``) is not reported.
    """

    code = "ARL102"
    message = "{name}() touches the filesystem on the event loop; await asyncio.to_thread(...) or do it in __init__"


class BlockingSerialization(Rule):
    """ARL103 disk (de)serialization in async code.

    What: ``torch.load/save``, ``pickle.load/dump``, ``np.load/save``, ``json.load/dump``,
    ``yaml.safe_load`` in async code (``json.loads``/``dumps`` are in-memory and fine).
    Why: reading or writing a file blocks every episode on the loop.
    Example: ``state = torch.load(path)`` in an episode.
    Fix: load once in ``__init__``, or ``await asyncio.to_thread(torch.load, path)``.
    """

    code = "ARL103"
    message = (
        "{name}() reads or writes a file on the event loop; await asyncio.to_thread({name}, ...)"
    )


class BlockingSleep(Rule):
    """ARL110 ``time.sleep`` in async code.

    What: ``time.sleep(x)`` (also ``from time import sleep``, ``import time as t``).
    Why: it freezes the event loop, so every concurrent episode waits ``x`` seconds.
    Example: ``time.sleep(1)`` while polling a tool in ``arun_episode``.
    Fix: ``await asyncio.sleep(x)``. The autofix does this but changes scheduling, so it is
    offered only with ``--unsafe-fixes``.
    """

    code = "ARL110"
    message = "time.sleep() blocks the event loop; use await asyncio.sleep(...)"
    fix = "unsafe"


class BlockingSubprocess(Rule):
    """ARL111 synchronous subprocess in async code.

    What: ``subprocess.run/call/check_output/Popen``, ``os.system``, ``os.popen``, ``os.wait*``.
    Why: the loop stops until the child exits: a tool call stalls every rollout.
    Example: ``out = subprocess.run(cmd, capture_output=True)`` in a tool of an agent.
    Fix: ``proc = await asyncio.create_subprocess_exec(...); out, _ = await proc.communicate()``.
    """

    code = "ARL111"
    message = "{name}() runs a process synchronously; use await asyncio.create_subprocess_exec(...)"


class BlockingHTTP(Rule):
    """ARL120 synchronous HTTP client in async code.

    What: ``requests.get/post/...``, methods of ``requests.Session()``, ``httpx.get`` and friends,
    methods of ``httpx.Client()``, ``urllib.request.urlopen``.
    Why: a synchronous request blocks the loop for the whole round trip.
    Example: ``r = requests.post(url, json=payload)`` in an episode.
    Fix: ``client = await workflow_context.get_httpx_client(); r = await client.post(...)``.
    """

    code = "ARL120"
    message = "{name}() is a synchronous HTTP call; use the shared async client: await workflow_context.get_httpx_client()"


class BlockingLLMClient(Rule):
    """ARL121 synchronous LLM SDK client in async code.

    What: constructing ``openai.OpenAI``/``anthropic.Anthropic`` in async code, or calling
    ``.create`` on a client bound to one, or ``litellm.completion``.
    Why: every completion blocks the event loop for the whole generation.
    Example: ``OpenAI(base_url=...).chat.completions.create(...)`` inside ``run``.
    Fix: ``AsyncOpenAI(base_url=..., http_client=..., api_key=...)`` and ``await ...create(...)``.
    """

    code = "ARL121"
    message = "{name} is a synchronous LLM client; use AsyncOpenAI/AsyncAnthropic and await it"


class BlockingEngineCall(Rule):
    """ARL130 blocking engine call inside an episode.

    What: ``engine.wait``, ``rollout_batch``, ``prepare_batch``, ``pause``/``resume`` or a sync
    ``generate`` on the episode's ``engine`` (or ``self.engine``).
    Why: these are trainer-side calls that wait for other episodes; inside an episode they
    deadlock or stall the loop.
    Example: ``engine.generate(req)`` instead of ``await engine.agenerate(req)``.
    Fix: only ``await engine.agenerate(req)`` (and ``engine.get_version()``) belong in an episode.
    """

    code = "ARL130"
    message = "engine.{name}() blocks inside an episode; episodes only await engine.agenerate(...)"


class LoopReentry(Rule):
    """ARL131 re-entering or blocking on the event loop from async code.

    What: ``asyncio.run``, ``loop.run_until_complete``, ``ray.get``, ``future.result()`` on a
    concurrent future, inside an ``async def``.
    Why: ``asyncio.run`` fails inside a running loop; the others block it until done.
    Example: ``asyncio.run(self.tool())`` inside ``arun_episode``.
    Fix: ``await self.tool()``; for concurrent futures ``await asyncio.wrap_future(fut)``.
    """

    code = "ARL131"
    message = "{name}() blocks or re-enters the running event loop; await the coroutine instead"


class EagerOffload(Rule):
    """ARL140 offloading that runs the function on the loop first.

    What: ``asyncio.to_thread(f(x))`` or ``loop.run_in_executor(ex, f(x))``: ``f`` runs right
    here, on the loop, and only its result is passed.
    Why: the work you meant to move off the loop still blocks it.
    Example: ``await asyncio.to_thread(load(path))``.
    Fix: pass the function and its arguments: ``await asyncio.to_thread(load, path)`` (safe
    autofix).
    """

    code = "ARL140"
    message = (
        "{name}() is called before it is offloaded; pass the function and its arguments: {fixed}"
    )
    fix = "safe"


class ConfiguredBlockingCall(Rule):
    """ARL190 user-configured blocking call.

    What: a call matching a pattern given with ``--arl-blocking-calls=pattern->suggestion``
    (fnmatch on the resolved name).
    Why: projects have their own blocking helpers the linter cannot know.
    Example: ``--arl-blocking-calls='mylib.fetch_*->mylib.afetch'``.
    Fix: the suggestion you configured.
    """

    code = "ARL190"
    message = "{name}() is configured as blocking{suggestion}"


def _is_offload_call(call: cst.Call, qualname: str | None) -> bool:
    return qualname == "asyncio.to_thread" or (
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "run_in_executor"
    )


@check("ARL101")
def blocking_open(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname in OPEN_CALLS or qualname in TEMPFILE:
        return Hit({"name": qualname.removeprefix("builtins.")})
    return None


@check("ARL102")
def blocking_filesystem(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname in FS_CALLS:
        return Hit({"name": qualname})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in PATH_METHODS:
        receiver = ctx.receiver_type(func.value)
        if receiver in ("pathlib.Path", "Path") or (
            isinstance(func.value, cst.Call) and ctx.resolve(func.value.func) == "pathlib.Path"
        ):
            return Hit({"name": f"Path.{func.attr.value}"})
    return None


@check("ARL103")
def blocking_serialization(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname not in SERIALIZE:
        return None
    if qualname.startswith("json.") and not _has_file_argument(call):
        return None  # json.load(fp=...) aside, only a positional file argument reads a file
    return Hit({"name": qualname})


@check("ARL110")
def blocking_sleep(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname == "time.sleep":
        return Hit(rewrite=_to_asyncio_sleep, needs=("asyncio",))
    return None


@check("ARL111")
def blocking_subprocess(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname and (qualname in SUBPROCESS or qualname.startswith("os.spawn")):
        return Hit({"name": qualname})
    return None


@check("ARL120")
def blocking_http(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname in HTTP_FUNCS or (
        qualname
        and qualname.split(".")[0] in ("requests", "httpx")
        and last(qualname) in HTTP_VERBS
        and qualname.count(".") == 1
    ):
        return Hit({"name": qualname})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in HTTP_VERBS:
        receiver = ctx.receiver_type(func.value)
        if receiver in SYNC_CLIENTS:
            return Hit({"name": f"{receiver}().{func.attr.value}"})
    return None


@check("ARL121")
def blocking_llm_client(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if ctx.frame.is_async and matches(qualname, *SYNC_LLM):
        return Hit({"name": qualname})
    if qualname in ("litellm.completion", "litellm.embedding"):
        return Hit({"name": qualname})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "create":
        root = _root_receiver(func.value)
        if root is not None and ctx.receiver_type(root) in SYNC_LLM:
            return Hit({"name": f"the {ctx.receiver_type(root)} client's create()"})
    return None


@check("ARL130")
def blocking_engine_call(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    func = call.func
    if (
        ctx.frame.is_episode
        and isinstance(func, cst.Attribute)
        and func.attr.value in BLOCKING_ENGINE
        and _is_engine(ctx, func.value)
    ):
        return Hit({"name": func.attr.value})
    return None


@check("ARL131")
def loop_reentry(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if ctx.frame.is_async and (
        qualname in REENTRY
        or (isinstance(call.func, cst.Attribute) and call.func.attr.value == "run_until_complete")
    ):
        return Hit({"name": qualname or "run_until_complete"})
    return None


@check("ARL140")
def eager_offload(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if not _is_offload_call(call, qualname):
        return None
    return _eager_offload(ctx, call, qualname)


@check("ARL190")
def configured_blocking_call(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    """Calls the built-in rules classify are theirs, reported or not: a serialization call
    (ARL103 knows which ones touch no file) and an offloading call (it moves work off the loop;
    ARL140 judges its argument)."""
    if not qualname or not ctx.options.blocking_calls:
        return None
    if qualname in SERIALIZE or _is_offload_call(call, qualname):
        return None
    for pattern, suggestion in ctx.options.blocking_calls.items():
        if fnmatch.fnmatch(qualname, pattern):
            return Hit(
                {"name": qualname, "suggestion": f"; use {suggestion}" if suggestion else ""}
            )
    return None


CALL_CHECKS = (
    blocking_open, blocking_filesystem, blocking_serialization, blocking_sleep,
    blocking_subprocess, blocking_http, blocking_llm_client, blocking_engine_call, loop_reentry,
    eager_offload, configured_blocking_call,
)  # fmt: skip


class BlockingVisitor(FamilyVisitor):
    """Calls in async bodies, and in the sync helpers an episode runs on the loop."""

    def visit_Call(self, node: cst.Call) -> None:
        frame = self.ctx.frame
        if not (frame.is_async or frame.is_episode):
            return
        qualname = self.ctx.qualname(node)
        for fn in CALL_CHECKS:
            self.run(fn, node, qualname)


def _has_file_argument(node: cst.Call) -> bool:
    return any(arg.keyword is None for arg in node.args)


def _root_receiver(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``self.client`` for ``self.client.chat.completions``; ``client`` for ``client.chat...``."""
    while isinstance(expr, cst.Attribute):
        if self_attr(expr) is not None:
            return expr
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def _is_engine(ctx: LintContext, expr: cst.BaseExpression) -> bool:
    info = ctx.frame.info
    if isinstance(expr, cst.Attribute):
        return self_attr(expr) == "engine"
    if not isinstance(expr, cst.Name) or info is None:
        return False
    params = [p.name.value for p in info.node.params.params]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    return (
        bool(params)
        and expr.value == params[0]
        and info.node.name.value in ctx.options.episode_methods
    )


def _to_asyncio_sleep(node: cst.Call) -> cst.BaseExpression:
    return cst.Await(
        expression=node.with_changes(func=cst.parse_expression("asyncio.sleep")),
        whitespace_after_await=cst.SimpleWhitespace(" "),
    )


def _eager_offload(ctx: LintContext, node: cst.Call, qualname: str | None) -> Hit | None:
    """``to_thread(f(x))``: the argument is a call, so ``f`` already ran on the loop."""
    is_executor = qualname != "asyncio.to_thread"
    position = 1 if is_executor else 0
    if len(node.args) <= position:
        return None
    target = node.args[position]
    if target.keyword is not None or not isinstance(target.value, cst.Call):
        return None
    inner = target.value
    inner_name = ctx.resolve(inner.func) or (
        getattr(inner.func, "value", None) if isinstance(inner.func, cst.Name) else None
    )
    if inner_name and last(inner_name) in ("partial", "getattr", "attrgetter", "methodcaller"):
        return None
    if any(a.star for a in inner.args):
        return None
    positional = [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in inner.args if a.keyword is None
    ]
    keywords = [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in inner.args if a.keyword is not None
    ]
    if is_executor and keywords:
        partial = cst.Call(
            func=cst.parse_expression("functools.partial"),
            args=[cst.Arg(inner.func), *positional, *keywords],
        )
        new_args = [*node.args[:position], cst.Arg(partial)]
    else:
        new_args = [*node.args[:position], cst.Arg(inner.func), *positional, *keywords]
    new_args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in new_args]
    fixed_node = node.with_changes(args=new_args)
    fixed = cst.Module(body=[]).code_for_node(fixed_node)
    return Hit(
        {"name": cst.Module(body=[]).code_for_node(inner.func), "fixed": fixed},
        rewrite=lambda n, _new=new_args: n.with_changes(args=_new),
        needs=("functools",) if is_executor and keywords else (),
    )


RULES = [
    BlockingOpen, BlockingFilesystem, BlockingSerialization, BlockingSleep, BlockingSubprocess,
    BlockingHTTP, BlockingLLMClient, BlockingEngineCall, LoopReentry, EagerOffload,
    ConfiguredBlockingCall,
]  # fmt: skip
