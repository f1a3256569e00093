# SPDX-License-Identifier: Apache-2.0
"""ARL3xx: clients, wrappers and heavy objects built per episode instead of once."""

from __future__ import annotations

import libcst as cst

from areal_lint.names import last, matches, self_attr
from areal_lint.rules.base import Rule
from areal_lint.visitor import OPTIONAL_TRANSPORT, SHARED_TRANSPORT, transport_kind

HTTP_POOLS = {
    "httpx.AsyncClient",
    "httpx.Client",
    "aiohttp.ClientSession",
    "aiohttp.TCPConnector",
    "requests.Session",
}
LLM_CLIENTS = {
    "AsyncOpenAI",
    "AsyncAzureOpenAI",
    "AsyncAnthropic",
    "ChatOpenAI",
    "ChatAnthropic",
    "Router",
}
TRANSPORT_KWARGS = {"http_client", "http_async_client"}
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
    ``self`` attribute.
    Why: leaving the ``async with`` closes the SDK client, and the SDK closes the transport it
    was given, whoever owns it: every later and concurrent episode then fails (AReaL's tongyi
    example hides this as silent zero rewards).
    Example: ``async with AsyncOpenAI(http_client=await workflow_context.get_httpx_client()) as c:``.
    Fix: ``c = AsyncOpenAI(http_client=shared)`` without ``async with``; never close a shared
    transport (unsafe autofix, when the client is the first item and bound with ``as``: the
    assignment replaces the item and the body moves out of the block).
    """

    code = "ARL306"
    message = "async with {name}(http_client=<shared>) closes the shared client on exit; assign the client instead of using async with"
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


def check(v, node: cst.Call) -> None:
    frame = v.frame
    qualname = v.resolve(node.func)
    if qualname is None:
        return
    if frame.is_async and not frame.is_setup and matches(qualname, *POOLS):
        v.report(PoolPerCall, node, name=last(qualname))
        return
    if frame.is_setup or id(node) in v.guarded_calls:
        return
    if qualname in HTTP_POOLS:
        if frame.is_episode:
            v.report(PerEpisodeHTTPPool, node, name=qualname)
        elif frame.is_async and not _handed_over(v, node):
            v.report(PerCallHTTPPool, node, name=qualname)
        return
    if not frame.is_episode:
        return
    if matches(qualname, "AsyncRewardWrapper"):
        v.report(PerEpisodeRewardWrapper, node)
        return
    if matches(qualname, *LLM_CLIENTS) and not matches(qualname, *v.options.per_episode_ok):
        transport = next(
            (a for a in node.args if a.keyword and a.keyword.value in TRANSPORT_KWARGS), None
        )
        if transport is None or (
            isinstance(transport.value, cst.Name) and transport.value.value == "None"
        ):
            v.report(PerEpisodeLLMClient, node, name=last(qualname))
        elif (
            _optional_get(transport.value) or v.receiver_type(transport.value) == OPTIONAL_TRANSPORT
        ):
            v.report(OptionalTransport, transport.value)
        return
    if (
        last(qualname) == "from_pretrained"
        or matches(qualname, *HEAVY)
        or qualname in v.options.heavy_calls
    ):
        v.report(HeavyInitInEpisode, node, name=qualname)


def _optional_get(expr: cst.BaseExpression) -> bool:
    if not (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get"
    ):
        return False
    args = expr.args
    if (
        not args
        or not isinstance(args[0].value, cst.SimpleString)
        or "http_client" not in args[0].value.value
    ):
        return False
    return len(args) == 1 or (isinstance(args[1].value, cst.Name) and args[1].value.value == "None")


def on_with(v, node: cst.With) -> None:
    if node.asynchronous is None or not v.frame.is_async:
        return
    for position, item in enumerate(node.items):
        call = item.item
        if not isinstance(call, cst.Call) or not matches(v.resolve(call.func), *LLM_CLIENTS):
            continue
        transport = next(
            (a for a in call.args if a.keyword and a.keyword.value in TRANSPORT_KWARGS), None
        )
        if transport is not None and _shared(v, transport.value):
            # Fixable when it is entered first (later items may use earlier targets) and bound.
            fixable = position == 0 and item.asname is not None
            v.report(
                ClosesSharedTransport,
                call,
                rewrite=_assign_instead_of_with if fixable else None,
                fix_node=node if fixable else None,
                name=last(v.resolve(call.func)),
            )


def _handed_over(v, node: cst.Call) -> bool:
    """Returned by a factory or kept on ``self``: the pool outlives this call."""
    target = v.assign_target_of.get(id(node))
    return id(node) in v.returned_calls or self_attr(target) is not None


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


def _shared(v, expr: cst.BaseExpression) -> bool:
    if transport_kind(expr) == SHARED_TRANSPORT:
        return True
    if self_attr(expr) is not None:
        return True
    if isinstance(expr, cst.Name):
        info = v.frame.info
        params = {p.name.value for p in info.node.params.params} if info else set()
        return (
            v.receiver_type(expr) in (SHARED_TRANSPORT, OPTIONAL_TRANSPORT) or expr.value in params
        )
    return False


RULES = [PerEpisodeHTTPPool, PerCallHTTPPool, PerEpisodeRewardWrapper, PerEpisodeLLMClient,
         OptionalTransport, ClosesSharedTransport, HeavyInitInEpisode, PoolPerCall]  # fmt: skip
