# SPDX-License-Identifier: Apache-2.0
"""ARL1xx: blocking calls on the event loop (any async body, and sync helpers of episodes)."""

from __future__ import annotations

import fnmatch
from typing import ClassVar

import libcst as cst

from areal_lint.analysis.tables import (
    BLOCKING_ENGINE,
    CLIENT_NO_IO,
    FILE_NO_IO,
    FILE_TYPES,
    FS_CALLS,
    HTTP_FUNCS,
    HTTP_MODULES,
    HTTP_VERBS,
    IDENTITY_CALLS,
    LITELLM,
    OPEN_CALLS,
    OPENERS,
    PATH_METHODS,
    PATH_TYPES,
    REENTRY,
    RUNNABLE_METHODS,
    RUNNABLE_NAMES,
    SERIALIZE,
    SOCKET_CALLS,
    SQLITE_METHODS,
    SQLITE_TYPES,
    SUBPROCESS,
    SYNC_CLIENTS,
    SYNC_LLM,
    SYNC_LLM_METHODS,
    TEMPFILE,
    TERMINAL_INPUT,
    WAITING_METHODS,
)
from areal_lint.context import LintContext
from areal_lint.names import dotted, last, self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Rule, check


class BlockingOpen(Rule):
    """ARL101 blocking file open in async code.

    What: ``open()``, ``io.open``, ``io.open_code``, ``os.fdopen``, ``codecs.open`` or a
    ``tempfile`` file opened in an ``async def`` (or a sync helper an episode calls). The reads
    and writes on a file opened here are covered by this one finding.
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

    What: ``os.makedirs``, ``os.listdir``, ``shutil.*``, the ``os.path`` calls that stat the disk
    (``exists``, ``islink``, ``realpath``, ``samefile``, ``getctime``, ``lexists``...) or
    ``pathlib.Path`` I/O methods (``read_text``, ``mkdir``, ``resolve``...) in async code, on a
    ``Path`` built here, kept on ``self`` or received as an annotated parameter.
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
    ``yaml.safe_load`` in async code (``json.loads``/``dumps`` and ``yaml.safe_load`` of a string
    are in-memory and fine).
    Why: reading or writing a file blocks every episode on the loop.
    Example: ``state = torch.load(path)`` in an episode.
    Fix: load once in ``__init__``, or ``await asyncio.to_thread(torch.load, path)``.
    """

    code = "ARL103"
    also_with: ClassVar[dict[str, str]] = {
        "ARL103": "writing out a value another call loaded is a second disk access, with its "
        "own fix"
    }
    message = (
        "{name}() reads or writes a file on the event loop; await asyncio.to_thread({name}, ...)"
    )


class BlockingFileObject(Rule):
    """ARL104 reading or writing a synchronous file object in async code.

    What: any method (``read``, ``write``, ``flush``, ``close``...; not ``fileno``/``isatty``)
    of a file whose type is known: from an annotation (``f: TextIO``, ``IO[bytes]``,
    ``io.BufferedReader``, a parameter's or a module global's), or a file opened elsewhere
    (``self.log = open(...)`` in ``__init__``, ``f = await asyncio.to_thread(open, p)``). A
    file opened in this body (``with open(p) as f``, ``f = open(p)``, ``open(p).read()``) is
    reported once, as ARL101 at the ``open``: its reads and writes, and ``json.dump(x, f)``
    (ARL103), add nothing, since moving the ``open`` off the loop fixes them all.
    Why: each read or write is a blocking system call on the shared loop; on a network
    filesystem, or a pipe, it can wait for long.
    Example: ``async def load(f: TextIO): return f.read()``.
    Fix: ``await asyncio.to_thread(f.read)``, or open it with ``aiofiles`` and await the calls.
    """

    code = "ARL104"
    message = "{name}() reads or writes a synchronous file on the event loop; await asyncio.to_thread({name}) or use aiofiles"


class BlockingSQLite(Rule):
    """ARL105 synchronous sqlite3 in async code.

    What: ``sqlite3.connect(...)`` and ``execute``/``commit``/``fetchall``... on a connection or
    cursor (built here, kept on ``self`` or an annotated parameter).
    Why: sqlite3 reads and writes the database file, and waits on its lock, on the loop.
    Example: ``self.db.execute("INSERT ...", row)`` in an episode that logs trajectories.
    Fix: ``aiosqlite`` (``async with aiosqlite.connect(path) as db: await db.execute(...)``), or
    ``await asyncio.to_thread(...)`` around the whole transaction.
    """

    code = "ARL105"
    message = (
        "{name}() is a synchronous sqlite3 call; use aiosqlite or await asyncio.to_thread(...)"
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

    What: ``subprocess.run/call/check_output/Popen``, ``os.system``, ``os.popen``, ``os.wait*``,
    ``os.spawn*``, ``os.posix_spawn``/``posix_spawnp``, ``pty.spawn``.
    Why: the loop stops until the child exits: a tool call stalls every rollout.
    Example: ``out = subprocess.run(cmd, capture_output=True)`` in a tool of an agent.
    Fix: ``proc = await asyncio.create_subprocess_exec(...); out, _ = await proc.communicate()``.
    """

    code = "ARL111"
    message = "{name}() runs a process synchronously; use await asyncio.create_subprocess_exec(...)"


class BlockingTerminalInput(Rule):
    """ARL112 waiting for terminal input in async code.

    What: ``input()``, ``getpass.getpass()``, ``sys.stdin.read()``/``readline()``.
    Why: the loop stops until someone types a line; under a trainer nobody will, so every
    episode hangs.
    Example: ``answer = input("approve tool call? ")`` in an agent's ``run``.
    Fix: pass the value in (config, the episode's data); for an interactive tool,
    ``await asyncio.to_thread(input, prompt)``.
    """

    code = "ARL112"
    message = "{name}() waits for terminal input on the event loop; pass the value in, or await asyncio.to_thread({name}, ...)"


class BlockingHTTP(Rule):
    """ARL120 synchronous HTTP client in async code.

    What: ``requests.get/post/...``, ``httpx.get``/``httpx2.get`` and friends,
    ``urllib.request.urlopen``, ``urllib3.request``, and any method (``send``, ``close``,
    ``stream``...; not ``build_request``) of a synchronous client or pool (``requests.Session``,
    ``httpx.Client``, ``httpx2.Client``, ``urllib3``'s pools and managers,
    ``http.client.HTTPConnection``) built here, kept on ``self`` (whichever method set it), a
    module global, or annotated (``client: httpx.Client``, ``c: urllib3.PoolManager = ...``).
    Why: a synchronous request blocks the loop for the whole round trip.
    Example: ``r = requests.post(url, json=payload)`` in an episode.
    Fix: ``client = await workflow_context.get_httpx_client(); r = await client.post(...)``.
    """

    code = "ARL120"
    also_with: ClassVar[dict[str, str]] = {
        "ARL301": "a client built per episode (move it to __init__) and a synchronous request "
        "on it (use the async client) are two fixes",
        "ARL302": "a client built per call (share one) and a synchronous request on it (use "
        "the async client) are two fixes",
    }
    message = "{name}() is a synchronous HTTP call; use the shared async client: await workflow_context.get_httpx_client()"


class BlockingLLMClient(Rule):
    """ARL121 synchronous LLM SDK client in async code.

    What: constructing ``openai.OpenAI``/``anthropic.Anthropic`` (and their Azure, Bedrock,
    Vertex variants) in async code; ``.create``/``.parse``/``.stream`` on a client bound to one
    (``client.chat.completions.create``, ``OpenAI().responses.create``,
    ``client.messages.create``), also when the client is an annotated parameter or kept on
    ``self``; ``openai.chat.completions.create`` on the module's default client;
    ``litellm.completion``/``embedding``/``responses``.
    Why: every completion blocks the event loop for the whole generation.
    Example: ``OpenAI(base_url=...).chat.completions.create(...)`` inside ``run``.
    Fix: the async twin the message names: ``AsyncOpenAI(base_url=..., http_client=...,
    api_key=...)`` and ``await ...create(...)``, ``await litellm.acompletion(...)``.
    """

    code = "ARL121"
    message = "{name} is a synchronous LLM call; {fix}"


class BlockingAgentFramework(Rule):
    """ARL122 synchronous agent-framework entry point in async code.

    What: ``agents.Runner.run_sync`` (OpenAI Agents SDK); ``invoke``/``batch``/``stream`` on a
    LangChain chat model or runnable (``ChatOpenAI(...)``, ``init_chat_model(...)``, a
    ``BaseChatModel`` parameter) or a LangGraph graph (``create_react_agent(...)``,
    ``StateGraph(...).compile()``).
    Why: the whole agent run, every model call and tool call in it, blocks the event loop;
    ``Runner.run_sync`` even refuses to run inside a running loop.
    Example: ``reply = self.llm.invoke(messages)`` in an agent's ``async def run``.
    Fix: the async twin: ``await Runner.run(agent, input)``, ``await llm.ainvoke(...)``,
    ``abatch``, ``astream`` (``async for``).
    """

    code = "ARL122"
    message = "{name}() runs the agent synchronously on the event loop; use {fix}"


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

    What: ``asyncio.run``, ``loop.run_until_complete``, ``ray.get`` inside an ``async def``;
    waiting on a thread primitive: ``result()`` of a ``concurrent.futures.Future`` (also from
    ``executor.submit(...)``), ``threading.Event().wait()``, ``Lock().acquire()``,
    ``queue.Queue().get()``, ``Thread.join()``, a synchronous socket's ``recv``/``sendall``/``connect``
    and a listening one's ``accept``;
    ``socket.create_connection``, ``socket.getaddrinfo``/``gethostbyname`` and the other
    lookups (DNS and the TCP handshake wait on the network).
    Why: ``asyncio.run`` fails inside a running loop; the others block it until done.
    Example: ``asyncio.run(self.tool())`` inside ``arun_episode``.
    Fix: ``await self.tool()``; for concurrent futures ``await asyncio.wrap_future(fut)``; the
    asyncio twin of the primitive (``asyncio.Event``, ``asyncio.Queue``...);
    ``await asyncio.open_connection(host, port)``, ``await loop.getaddrinfo(host, port)``;
    a server: ``await asyncio.start_server(handle, host, port)``.
    """

    code = "ARL131"
    message = "{name}() blocks or re-enters the running event loop; {fix}"


class EagerOffload(Rule):
    """ARL140 offloading that runs the function on the loop first.

    What: ``asyncio.to_thread(f(x))`` or ``loop.run_in_executor(ex, f(x))``: ``f`` runs right
    here, on the loop, and only its result is passed.
    Why: the work you meant to move off the loop still blocks it.
    Example: ``await asyncio.to_thread(load(path))``.
    Fix: pass the function and its arguments: ``await asyncio.to_thread(load, path)`` (safe
    autofix). ``typing.cast(T, fn)`` (and ``assert_type``, ``reveal_type``) returns its
    argument and runs nothing: ``run_in_executor(None, cast(T, fn))`` hands ``fn`` over and is
    right; the fix never offloads such a call.
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
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value in PATH_METHODS
        and ctx.receiver_type(func.value) in PATH_TYPES
    ):
        return Hit({"name": f"Path.{func.attr.value}"})
    return None


def _opened_here(ctx: LintContext, expr: cst.BaseExpression) -> bool:
    """A file this body opened: its ``open`` is ARL101, which covers every use of the file."""
    return ctx.made_by(expr) in OPENERS


@check("ARL104")
def blocking_file_object(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value in FILE_NO_IO:
        return None
    if _opened_here(ctx, func.value):
        return None
    receiver = ctx.receiver_type(func.value)
    if receiver in FILE_TYPES or receiver in OPEN_CALLS or receiver in TEMPFILE:
        return Hit({"name": f"{_receiver_text(func.value)}.{func.attr.value}"})
    return None


@check("ARL105")
def blocking_sqlite(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname == "sqlite3.connect":
        return Hit({"name": qualname})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in SQLITE_METHODS:
        receiver = ctx.receiver_type(func.value)
        if receiver in SQLITE_TYPES and ctx.made_by(func.value) != "sqlite3.connect":
            # a connection made in this body is one finding, at its connect
            return Hit({"name": f"{_receiver_text(func.value)}.{func.attr.value}"})
    return None


@check("ARL103")
def blocking_serialization(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname not in SERIALIZE:
        return None
    if qualname.startswith("json.") and not _has_file_argument(call):
        return None  # json.load(fp=...) aside, only a positional file argument reads a file
    if qualname.startswith("yaml.") and call.args and _is_text(call.args[0].value):
        return None  # yaml.safe_load(path.read_text()) parses a string; the read blocks
    if any(a.keyword is None and _opened_here(ctx, a.value) for a in call.args):
        return None  # json.dump(record, out) on a file opened here: ARL101 at its open
    return Hit({"name": qualname})


def _is_text(expr: cst.BaseExpression) -> bool:
    """A string, not a stream: a literal, an f-string, or what ``read_text()``/``read()``/
    ``decode()``/``getvalue()`` return (verifiers' harbor taskset)."""
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return True
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("read_text", "read", "decode", "getvalue", "strip")
    )


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


@check("ARL112")
def blocking_terminal_input(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname in TERMINAL_INPUT:
        return Hit({"name": qualname.removeprefix("builtins.")})
    return None


@check("ARL120")
def blocking_http(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname in HTTP_FUNCS or (
        qualname
        and qualname.split(".")[0] in HTTP_MODULES
        and last(qualname) in HTTP_VERBS
        and qualname.count(".") == 1
    ):
        return Hit({"name": qualname})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value not in CLIENT_NO_IO:
        receiver = ctx.receiver_type(func.value)
        if receiver in SYNC_CLIENTS:  # any method: send, close, stream, a pool's urlopen...
            return Hit({"name": f"{receiver}().{func.attr.value}"})
    return None


@check("ARL121")
def blocking_llm_client(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if ctx.frame.is_async and qualname in SYNC_LLM:
        return Hit({"name": qualname, "fix": f"use {SYNC_LLM[qualname]} and await its calls"})
    if qualname and qualname.startswith("litellm.") and last(qualname) in LITELLM:
        return Hit({"name": qualname, "fix": f"await litellm.{LITELLM[last(qualname)]}(...)"})
    if (
        qualname
        and qualname.startswith("openai.")
        and last(qualname) in SYNC_LLM_METHODS
        and qualname.count(".") >= 2  # openai.chat.completions.create: the module's sync client
    ):
        return Hit({"name": qualname, "fix": "use openai.AsyncOpenAI and await its calls"})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in SYNC_LLM_METHODS:
        root = _root_receiver(func.value)
        if isinstance(root, cst.Call) and ctx.frame.is_async:
            return None  # OpenAI().responses.create(): one finding, at the OpenAI() above
        receiver = ctx.receiver_type(root) if root is not None else None
        if receiver in SYNC_LLM and ctx.frame.is_async and ctx.made_by(root) in SYNC_LLM:
            return None  # llm = OpenAI() in this async body: one finding, at OpenAI()
        if receiver in SYNC_LLM:
            path = cst.Module(body=[]).code_for_node(func).split(".", 1)
            method = path[1] if isinstance(root, cst.Call | cst.Name) else func.attr.value
            return Hit(
                {
                    "name": f"the {receiver} client's {method}()",
                    "fix": f"use {SYNC_LLM[receiver]} and await {method}(...)",
                }
            )
    return None


@check("ARL122")
def blocking_agent_framework(ctx: LintContext, call: cst.Call, qualname: str | None) -> Hit | None:
    if qualname and qualname.startswith("agents.") and qualname.endswith("Runner.run_sync"):
        return Hit({"name": "Runner.run_sync", "fix": "await Runner.run(agent, input)"})
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in RUNNABLE_METHODS:
        receiver = ctx.receiver_type(func.value)
        if receiver is not None and _is_runnable(receiver):
            text = _receiver_text(func.value)
            method, twin = func.attr.value, RUNNABLE_METHODS[func.attr.value]
            how = "async for ... in" if method == "stream" else "await"
            return Hit({"name": f"{text}.{method}", "fix": f"{how} {text}.{twin}(...)"})
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
        return Hit({"name": qualname or "run_until_complete", "fix": "await the coroutine instead"})
    if ctx.frame.is_async and qualname in SOCKET_CALLS:
        return Hit({"name": qualname, "fix": SOCKET_CALLS[qualname]})
    func = call.func
    if isinstance(func, cst.Attribute):
        receiver = ctx.receiver_type(func.value)
        methods, fix = WAITING_METHODS.get(receiver or "", ((), ""))
        if func.attr.value in methods and not (
            ctx.frame.is_async and ctx.made_by(func.value) in SOCKET_CALLS
        ):  # a connection made in this body is one finding, at its create_connection
            return Hit({"name": f"{receiver}.{func.attr.value}", "fix": fix})
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
    blocking_open, blocking_filesystem, blocking_serialization, blocking_file_object,
    blocking_sqlite, blocking_sleep, blocking_subprocess, blocking_terminal_input, blocking_http,
    blocking_llm_client, blocking_agent_framework, blocking_engine_call, loop_reentry,
    eager_offload, configured_blocking_call,
)  # fmt: skip


# The checks that judge a method by its receiver's inferred type.
TYPED_METHOD_CHECKS = (blocking_filesystem, blocking_file_object, blocking_sqlite, blocking_http,
                       loop_reentry)  # fmt: skip


class BlockingVisitor(FamilyVisitor):
    """Calls in async bodies, and in the sync helpers an episode runs on the loop."""

    def visit_Call(self, node: cst.Call) -> None:
        frame = self.ctx.frame
        if not (frame.is_async or frame.is_episode):
            return
        qualname = self.ctx.qualname(node)
        # ``await obj.m()``, ``async with obj.m()``: obj is the async twin, whatever its type
        # looked like
        typed_method = (
            self.ctx.is_used_asynchronously(node)
            and isinstance(node.func, cst.Attribute)
            and self.ctx.receiver_type(node.func.value) is not None
        )
        for fn in CALL_CHECKS:
            if not (typed_method and fn in TYPED_METHOD_CHECKS):
                self.run(fn, node, qualname)


def _has_file_argument(node: cst.Call) -> bool:
    return any(arg.keyword is None for arg in node.args)


def _root_receiver(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``self.client`` for ``self.client.chat.completions``; ``client`` for ``client.chat...``;
    ``OpenAI()`` for ``OpenAI().responses``."""
    while isinstance(expr, cst.Attribute):
        if self_attr(expr) is not None:
            return expr
        expr = expr.value
    return expr if isinstance(expr, cst.Name | cst.Call) else None


def _receiver_text(expr: cst.BaseExpression) -> str:
    """How the message names a receiver: ``self.db``, ``f``, ``ChatOpenAI(...)``."""
    if isinstance(expr, cst.Call):
        return (dotted(expr.func) or "...") + "(...)"
    return dotted(expr) or "..."


def _is_runnable(kind: str) -> bool:
    """A LangChain chat model or runnable, or a LangGraph graph (sync ``invoke``)."""
    if not kind.startswith(("langchain", "langgraph")):
        return False
    name = last(kind)
    return name in RUNNABLE_NAMES or (
        name.startswith(("Chat", "AzureChat")) and "Async" not in name
    )


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


def _without_identity_calls(ctx: LintContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """``cast(T, fn)`` is ``fn`` at run time: see through calls that return their argument."""
    while isinstance(expr, cst.Call):
        name = ctx.resolve(expr.func)
        if name not in IDENTITY_CALLS:
            break
        positional = [a for a in expr.args if a.keyword is None and not a.star]
        index = IDENTITY_CALLS[name]
        if len(positional) <= index:
            break
        expr = positional[index].value
    return expr


def _eager_offload(ctx: LintContext, node: cst.Call, qualname: str | None) -> Hit | None:
    """``to_thread(f(x))``: the argument is a call, so ``f`` already ran on the loop."""
    is_executor = qualname != "asyncio.to_thread"
    position = 1 if is_executor else 0
    if len(node.args) <= position:
        return None
    target = node.args[position]
    if target.keyword is not None:
        return None
    inner = _without_identity_calls(ctx, target.value)
    if not isinstance(inner, cst.Call):
        return None  # a function (maybe behind cast(...)) is handed over: right
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
    BlockingOpen, BlockingFilesystem, BlockingSerialization, BlockingFileObject, BlockingSQLite,
    BlockingSleep, BlockingSubprocess, BlockingTerminalInput, BlockingHTTP, BlockingLLMClient,
    BlockingAgentFramework, BlockingEngineCall, LoopReentry, EagerOffload,
    ConfiguredBlockingCall,
]  # fmt: skip
