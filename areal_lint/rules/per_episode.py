# SPDX-License-Identifier: Apache-2.0
"""ARL3xx: clients, wrappers and heavy objects built per episode instead of once."""

from __future__ import annotations

import libcst as cst

from areal_lint.analysis.transports import (
    HTTP_POOLS,
    OPTIONAL_TRANSPORT,
    SHARED_TRANSPORT,
    Transports,
    in_process_transport,
    is_shared_transport,
    optional_get,
    transport_arg,
    transport_kind,
)
from areal_lint.context import LintContext
from areal_lint.names import dotted, last, matches, self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Reporter, Rule, check
from areal_lint.walk import Walker

LLM_CLIENTS = {
    "AsyncOpenAI",
    "AsyncAzureOpenAI",
    "AsyncAnthropic",
    "ChatOpenAI",
    "ChatAnthropic",
    "Router",
}
HEAVY = {
    "load_hf_tokenizer", "tiktoken.get_encoding", "tiktoken.encoding_for_model",
    "datasets.load_dataset", "SentenceTransformer", "spacy.load", "import_from_string",
    "importlib.import_module",
}  # fmt: skip
POOLS = {"concurrent.futures.ThreadPoolExecutor", "concurrent.futures.ProcessPoolExecutor",
         "multiprocessing.Pool", "pebble.ProcessPool", "ThreadPoolExecutor", "ProcessPoolExecutor"}  # fmt: skip


class PerEpisodeHTTPPool(Rule):
    """ARL301 HTTP connection pool created per episode.

    What: ``httpx.AsyncClient()``, ``aiohttp.ClientSession()``, ``requests.Session()`` built
    inside an episode (or a helper it calls).
    Why: every episode opens new connections and TLS sessions; AReaL measured a per-episode
    client as "extremely expensive" (PR #819).
    Example: ``async with httpx.AsyncClient() as c:`` in ``arun_episode``.
    Fix: ``client = await workflow_context.get_httpx_client()`` (or ``get_aiohttp_session()``).
    """

    code = "ARL301"
    message = "{name}() creates a connection pool per episode; reuse await workflow_context.get_httpx_client()"


class PerCallHTTPPool(Rule):
    """ARL302 HTTP connection pool created per call in async code.

    What: the same constructors as ARL301 in any async function that is not set-up code, unless
    the function hands the pool over (``return X(...)``, ``self.x = X(...)``).
    Why: tool helpers called once per step pay the connection cost every time.
    Example: ``async def search(q): async with aiohttp.ClientSession() as s: ...``.
    Fix: the shared ``workflow_context`` clients, or a client created once and cached.
    """

    code = "ARL302"
    message = (
        "{name}() creates a connection pool per call; reuse a shared client (workflow_context)"
    )


class PerEpisodeRewardWrapper(Rule):
    """ARL303 ``AsyncRewardWrapper`` built per episode.

    What: ``AsyncRewardWrapper(fn)`` inside an episode, not under a lazy-init guard.
    Why: each wrapper registers with the process pool; building one per episode churns pools
    (AReaL shuts the pool down when the last wrapper dies) and re-pickles the function.
    Example: ``reward = await AsyncRewardWrapper(math_reward)(...)`` inside ``run``.
    Fix: build it once in ``__init__``: ``self.reward_fn = AsyncRewardWrapper(math_reward)``.
    """

    code = "ARL303"
    message = "AsyncRewardWrapper is built per episode; build it once in __init__"


class PerEpisodeLLMClient(Rule):
    """ARL304 LLM SDK client built per episode without a shared transport.

    What: ``AsyncOpenAI(...)``, ``AsyncAnthropic(...)``, ``ChatOpenAI(...)`` in an episode
    without ``http_client=`` (or ``http_async_client=``).
    Why: each client creates its own connection pool; with hundreds of episodes that exhausts
    sockets and defeats the proxy's shared client.
    Example: ``AsyncOpenAI(base_url=base_url, api_key=api_key)`` in ``run``.
    Fix: pass ``http_client=extra_kwargs["http_client"]`` (AReaL's agent kwargs) or a shared one.
    """

    code = "ARL304"
    message = "{name}() without http_client= builds a private connection pool per episode; pass http_client=extra_kwargs['http_client']"


class OptionalTransport(Rule):
    """ARL305 LLM client whose transport may silently be missing.

    What: ``http_client=extra_kwargs.get("http_client")`` (no default) given to a client built
    per episode.
    Why: when the caller does not pass one, the SDK silently builds a private pool per episode.
    Example: ``AsyncOpenAI(http_client=kwargs.get("http_client"))``.
    Fix: ``extra_kwargs["http_client"]`` (fail loudly), or a shared fallback client.
    """

    code = "ARL305"
    message = "http_client=...get('http_client') falls back to a private pool when none is passed; index it or give a shared default"


class ClosesSharedTransport(Rule):
    """ARL306 closing a client that wraps a shared transport.

    What: ``async with AsyncOpenAI(..., http_client=<shared>)`` where the client comes from
    ``workflow_context.get_httpx_client()``, ``extra_kwargs["http_client"]``, a parameter or a
    ``self`` attribute; ``await client.close()``/``await client.aclose()`` in async code on a
    client assigned from such a constructor (a local, or a ``self`` attribute assigned earlier
    in the file); and closing, or entering with ``async with``, the shared client itself
    (``c = await workflow_context.get_httpx_client()`` then ``await c.aclose()``, likewise
    ``get_aiohttp_session()`` and ``kwargs["http_client"]``). A client bound by the reported
    ``async with`` is not reported again at its ``close()``.
    Why: leaving the ``async with`` or calling ``close()`` closes the SDK client, and the SDK
    closes the transport it was given, whoever owns it: every later and concurrent episode then
    fails (AReaL's tongyi example hides this as silent zero rewards).
    Example: ``async with AsyncOpenAI(http_client=await workflow_context.get_httpx_client()) as c:``;
    ``judge = AsyncOpenAI(http_client=http_client)`` ... ``await judge.close()``.
    Fix: ``c = AsyncOpenAI(http_client=shared)`` without ``async with``, and no ``close()``: never
    close a shared transport, the workflow closes it (unsafe autofix for ``async with``, when the
    client is the first item and bound with ``as``: the assignment replaces the item and the body
    moves out of the block; none for ``close()``).
    """

    code = "ARL306"
    message = "{name} closes the shared http_client every episode uses; {fix}"
    fix = "unsafe"


class HeavyInitInEpisode(Rule):
    """ARL310 heavy initialisation inside an episode.

    What: ``*.from_pretrained``, ``load_hf_tokenizer``, ``tiktoken.get_encoding``,
    ``datasets.load_dataset``, ``SentenceTransformer``, ``spacy.load``, unguarded
    ``import_from_string``/``importlib.import_module`` (plus ``--arl-heavy-calls``), in an
    episode or a helper it calls.
    Why: loading models or data per episode costs seconds and blocks the loop.
    Example: ``tok = AutoTokenizer.from_pretrained(path)`` in ``arun_episode``.
    Fix: load once in ``__init__`` (or lazily behind ``if self.tok is None:``).
    """

    code = "ARL310"
    message = (
        "{name}() is heavy set-up run per episode; do it once in __init__ or behind a lazy guard"
    )


class PoolPerCall(Rule):
    """ARL311 thread or process pool created in async code.

    What: ``ThreadPoolExecutor()``, ``ProcessPoolExecutor()``, ``multiprocessing.Pool()`` in an
    async function; worst with ``with ThreadPoolExecutor() as ex:``, whose exit waits for the
    workers on the loop.
    Why: pools are expensive and their shutdown blocks the event loop.
    Example: ``with ThreadPoolExecutor() as ex: await loop.run_in_executor(ex, f)``.
    Fix: create the pool once (``__init__`` or module level) or use ``asyncio.to_thread``.
    """

    code = "ARL311"
    message = "{name}() creates a pool per call and its shutdown blocks the loop; create it once"


def _per_episode_exempt(ctx: LintContext, call: cst.Call, guarded: set[int]) -> bool:
    """Set-up code runs once, and a lazy-init guard builds the object once."""
    return ctx.frame.is_setup or id(call) in guarded


def _llm_client(ctx: LintContext, qualname: str | None) -> bool:
    return matches(qualname, *LLM_CLIENTS) and not matches(qualname, *ctx.options.per_episode_ok)


@check("ARL301")
def per_episode_http_pool(ctx: LintContext, call: cst.Call, guarded: set[int]) -> Hit | None:
    qualname = ctx.qualname(call)
    if (
        qualname in HTTP_POOLS
        and ctx.frame.is_episode
        and not _per_episode_exempt(ctx, call, guarded)
        and not in_process_transport(ctx, call)
    ):
        return Hit({"name": qualname})
    return None


@check("ARL302")
def per_call_http_pool(
    ctx: LintContext, call: cst.Call, guarded: set[int], returned: set[int]
) -> Hit | None:
    frame = ctx.frame
    qualname = ctx.qualname(call)
    if (
        qualname in HTTP_POOLS
        and frame.is_async
        and not frame.is_episode
        and not _per_episode_exempt(ctx, call, guarded)
        and not _handed_over(ctx, call, returned)
        and not in_process_transport(ctx, call)
    ):
        return Hit({"name": qualname})
    return None


@check("ARL303")
def per_episode_reward_wrapper(ctx: LintContext, call: cst.Call, guarded: set[int]) -> Hit | None:
    if (
        ctx.frame.is_episode
        and matches(ctx.qualname(call), "AsyncRewardWrapper")
        and not _per_episode_exempt(ctx, call, guarded)
    ):
        return Hit()
    return None


@check("ARL304")
def per_episode_llm_client(ctx: LintContext, call: cst.Call, guarded: set[int]) -> Hit | None:
    qualname = ctx.qualname(call)
    if not (ctx.frame.is_episode and _llm_client(ctx, qualname)):
        return None
    if _per_episode_exempt(ctx, call, guarded):
        return None
    if any(arg.star == "**" for arg in call.args):
        return None  # `AsyncOpenAI(**extra_kwargs)`: the transport may be in the mapping
    transport = transport_arg(call)
    if transport is None or (
        isinstance(transport.value, cst.Name) and transport.value.value == "None"
    ):
        return Hit({"name": last(qualname)})
    return None


@check("ARL305")
def optional_transport(
    ctx: LintContext, call: cst.Call, guarded: set[int], transports: Transports
) -> Hit | None:
    if not (ctx.frame.is_episode and _llm_client(ctx, ctx.qualname(call))):
        return None
    if _per_episode_exempt(ctx, call, guarded):
        return None
    transport = transport_arg(call)
    if transport is None or (
        isinstance(transport.value, cst.Name) and transport.value.value == "None"
    ):
        return None  # no transport at all: ARL304
    if optional_get(transport.value) or transports.kind_of(transport.value) == OPTIONAL_TRANSPORT:
        return Hit(node=transport.value)
    return None


_ASSIGN_INSTEAD = "assign the client instead of using async with"
_DO_NOT_CLOSE = "do not close it, the workflow owns and closes the shared client"


@check("ARL306")
def closes_shared_transport(
    ctx: LintContext,
    node: cst.BaseExpression,
    transports: Transports,
    shared: SharedClients,
    with_node: cst.With | None = None,
    position: int = 0,
) -> Hit | None:
    if with_node is None:  # await client.close() / client.aclose()
        if not (
            ctx.frame.is_async
            and isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("close", "aclose")
            and shared.owner(node.func.value) is not None
        ):
            return None
        return Hit({"name": f"{dotted(node.func)}()", "fix": _DO_NOT_CLOSE})
    if isinstance(node, cst.Call):
        name = shared_client_call(ctx, node, transports)
        if name is None:
            return None
        name = f"async with {name}(http_client=<shared>)"
    elif shared.is_transport(node):  # async with await workflow_context.get_httpx_client()
        name = "async with " + cst.Module(body=[]).code_for_node(node)
    else:
        return None
    item = with_node.items[position]
    # Fixable when it is entered first (later items may use earlier targets) and bound.
    fixable = position == 0 and item.asname is not None
    return Hit(
        {"name": name, "fix": _ASSIGN_INSTEAD},
        rewrite=_assign_instead_of_with if fixable else None,
        fix_node=with_node if fixable else None,
    )


def shared_client_call(ctx: LintContext, call: cst.Call, transports: Transports) -> str | None:
    """``AsyncOpenAI`` for ``AsyncOpenAI(http_client=<shared>)``, else None."""
    qualname = ctx.resolve(call.func)
    if not matches(qualname, *LLM_CLIENTS):
        return None
    transport = transport_arg(call)
    if transport is None or not is_shared_transport(ctx, transport.value, transports):
        return None
    return last(qualname)


class SharedClients:
    """Which locals and ``self`` attributes hold the shared transport, or an LLM client built
    over it: closing one closes the shared client (ARL306). Locals are per function; ``self``
    attributes per class, from assignments earlier in the file (``__init__`` comes first)."""

    def __init__(self, ctx: LintContext, transports: Transports) -> None:
        self.ctx = ctx
        self.transports = transports
        self.frames: list[dict[str, str]] = [{}]
        self.attrs: dict[str, dict[str, str]] = {}

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def is_transport(self, expr: cst.BaseExpression) -> bool:
        """The shared client itself: ``await workflow_context.get_httpx_client()``,
        ``kwargs["http_client"]`` or a local bound to one."""
        return (
            transport_kind(expr) == SHARED_TRANSPORT
            or self.transports.kind_of(expr) == SHARED_TRANSPORT
        )

    def owner(self, expr: cst.BaseExpression) -> str | None:
        """What makes ``expr`` a shared client (printable), or None."""
        if isinstance(expr, cst.Name):
            for frame in reversed(self.frames[1:]):
                if expr.value in frame:
                    return frame[expr.value]
            return "the shared client" if self.is_transport(expr) else None
        attr = self_attr(expr)
        cls = self.ctx.current_class()
        if attr is not None and cls is not None:
            return self.attrs.get(cls, {}).get(attr)
        return None

    def bind(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not self.ctx.frame.info:
            return
        target = node.targets[0].target
        value = node.value
        made = None
        if isinstance(value, cst.Call):
            made = shared_client_call(self.ctx, value, self.transports)
        elif self.is_transport(value):
            made = "the shared client"
        if isinstance(target, cst.Name):
            if made is not None:
                self.frames[-1][target.value] = made
            else:
                self.frames[-1].pop(target.value, None)
        elif (attr := self_attr(target)) is not None and self.ctx.current_class():
            attrs = self.attrs.setdefault(self.ctx.current_class(), {})  # type: ignore[arg-type]
            if made is not None:
                attrs[attr] = made
            else:
                attrs.pop(attr, None)


@check("ARL310")
def heavy_init_in_episode(ctx: LintContext, call: cst.Call, guarded: set[int]) -> Hit | None:
    qualname = ctx.qualname(call)
    if qualname is None or not ctx.frame.is_episode or _per_episode_exempt(ctx, call, guarded):
        return None
    if _llm_client(ctx, qualname):
        return None  # an LLM client is judged by its transport (ARL304-306), not as set-up
    if (
        last(qualname) == "from_pretrained"
        or matches(qualname, *HEAVY)
        or qualname in ctx.options.heavy_calls
    ):
        return Hit({"name": qualname})
    return None


@check("ARL311")
def pool_per_call(ctx: LintContext, call: cst.Call) -> Hit | None:
    frame = ctx.frame
    qualname = ctx.qualname(call)
    if frame.is_async and not frame.is_setup and matches(qualname, *POOLS):
        return Hit({"name": last(qualname)})
    return None


def _handed_over(ctx: LintContext, node: cst.Call, returned: set[int]) -> bool:
    """Returned by a factory or kept on ``self``: the pool outlives this call."""
    target = ctx.assign_target_of.get(id(node))
    return id(node) in returned or self_attr(target) is not None


def _kept_on_self(item: cst.WithItem, body: cst.BaseSuite) -> bool:
    """``async with X() as s: self.session = s`` (TRL's rollout workers): handed over."""
    if item.asname is None or not isinstance(item.asname.name, cst.Name):
        return False
    name = item.asname.name.value
    for line in body.body if isinstance(body, cst.IndentedBlock) else []:
        for stmt in line.body if isinstance(line, cst.SimpleStatementLine) else []:
            if (
                isinstance(stmt, cst.Assign)
                and isinstance(stmt.value, cst.Name)
                and stmt.value.value == name
                and any(self_attr(t.target) is not None for t in stmt.targets)
            ):
                return True
    return False


class _CallIds:
    """Collects the ids of every call in a subtree (the calls of a lazy-init assignment)."""

    def __init__(self, ids: set[int]) -> None:
        self.ids = ids

    def visit_Call(self, call: cst.Call) -> None:
        self.ids.add(id(call))


class PerEpisodeVisitor(FamilyVisitor):
    """Constructions in episodes (and async bodies): what should be built once is built each time."""

    def __init__(self, ctx: LintContext, reporter: Reporter) -> None:
        super().__init__(ctx, reporter)
        self.transports = Transports(ctx)
        self.shared = SharedClients(ctx, self.transports)
        self.guarded_calls: set[int] = set()  # calls inside a lazy-init assignment
        self.returned_calls: set[int] = set()  # ``return X(...)``: a factory hands X over
        self._guarded_walker = Walker(_CallIds(self.guarded_calls))
        self._handed_over_walker = Walker(_CallIds(self.returned_calls))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.transports.push()
        self.shared.push()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.transports.pop()
        self.shared.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.transports.push()
        self.shared.push()

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.transports.pop()
        self.shared.pop()

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Call):
            self.returned_calls.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        if (
            isinstance(node.value, cst.Call)
            and len(node.targets) == 1
            and self._lazy_init_target(node.targets[0].target)
        ):
            self._guarded_walker.walk(node.value)
        self.transports.bind(node)
        self.shared.bind(node)

    def visit_With(self, node: cst.With) -> None:
        if node.asynchronous is None or not self.ctx.frame.is_async:
            return
        for item in node.items:
            if _kept_on_self(item, node.body):  # the pool serves the object's long-lived loops
                self._handed_over_walker.walk(item.item)  # with its connector argument
        for position, item in enumerate(node.items):
            self.run(
                closes_shared_transport, item.item, self.transports, self.shared, node, position
            )

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("close", "aclose"):
            self.run(closes_shared_transport, node, self.transports, self.shared)
        if self.ctx.qualname(node) is None:
            return
        guarded = self.guarded_calls
        self.run(pool_per_call, node)
        self.run(per_episode_http_pool, node, guarded)
        self.run(per_call_http_pool, node, guarded, self.returned_calls)
        self.run(per_episode_reward_wrapper, node, guarded)
        self.run(per_episode_llm_client, node, guarded)
        self.run(optional_transport, node, guarded, self.transports)
        self.run(heavy_init_in_episode, node, guarded)

    def _lazy_init_target(self, target: cst.BaseExpression) -> bool:
        """An attribute, or a declared global, assigned under an ``if`` that tests it."""
        ctx = self.ctx
        if isinstance(target, cst.Subscript):
            return True  # cached into a container keyed per session
        if isinstance(target, cst.Attribute):
            text = dotted(target) or ""
            return ctx.guarded(text) or (text.startswith("self.") and ctx.guarded("self.*"))
        if isinstance(target, cst.Name):
            return target.value in ctx.frame.globals_declared and ctx.guarded(target.value)
        return False


def _assign_instead_of_with(node: cst.With) -> cst.FlattenSentinel[cst.BaseStatement]:
    """``async with C(...) as c[, rest]: body`` -> ``c = C(...)`` then ``[async with rest:] body``."""
    first, rest = node.items[0], node.items[1:]
    assert first.asname is not None
    assign = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(first.asname.name)], value=first.item)],
        leading_lines=node.leading_lines,
    )
    if not rest and isinstance(node.body, cst.IndentedBlock):  # keep "# comment" of the header
        assign = assign.with_changes(trailing_whitespace=node.body.header)
    if rest:
        last_item = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        remaining = node.with_changes(
            items=[*rest[:-1], last_item], leading_lines=(), lpar=cst.MaybeSentinel.DEFAULT,
            rpar=cst.MaybeSentinel.DEFAULT,
        )  # fmt: skip
        return cst.FlattenSentinel([assign, remaining])
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):  # "async with X() as c: stmt" on one line
        statements: list[cst.BaseStatement] = [
            cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)
        ]
    else:
        statements = list(body.body)
    return cst.FlattenSentinel([assign, *statements])


RULES = [PerEpisodeHTTPPool, PerCallHTTPPool, PerEpisodeRewardWrapper, PerEpisodeLLMClient,
         OptionalTransport, ClosesSharedTransport, HeavyInitInEpisode, PoolPerCall]  # fmt: skip
