# SPDX-License-Identifier: Apache-2.0
"""The async clients whose methods return a coroutine, read by ARL201-203 and by the context.

A client is known by its type: a constructor a local or a ``self`` attribute was bound to
(``self.client = httpx.AsyncClient()`` in ``__init__``), an annotation, or what an awaited call
gives (``await workflow_context.get_httpx_client()`` is an ``httpx.AsyncClient``; ``await
session.post(url)`` and ``async with session.post(url) as resp`` an ``aiohttp.ClientResponse``).
A method listed here, called on such a receiver and not awaited, is a coroutine that never runs.

This module holds data and pure lookups only (the context imports it); the table is rendered
into docs/lint_rules.md by ``docs_gen``. A missed client method is one line here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HTTP_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request"})


@dataclass(frozen=True)
class AsyncClient:
    """One async client type: the methods that return a coroutine, and what awaiting gives."""

    types: tuple[str, ...]  # dotted (exact) or bare (any module path ending in it)
    methods: frozenset[str]  # coroutine methods on the object itself: ``client.post(...)``
    # coroutine methods of its resources, any attribute path below it: ``client.chat.completions.create``
    resource_methods: frozenset[str] = frozenset()
    # method -> the type of ``await obj.method(...)`` or of ``async with obj.method(...) as x``
    results: dict[str, str] = field(default_factory=dict)
    note: str = ""


_SDK_CLIENT_METHODS = frozenset({"close", *HTTP_VERBS} - {"head", "options"})
ASYNC_CLIENTS: tuple[AsyncClient, ...] = (
    AsyncClient(
        ("httpx.AsyncClient", "httpx2.AsyncClient"),
        HTTP_VERBS | {"send", "aclose"},
        results={verb: "httpx.Response" for verb in HTTP_VERBS | {"send", "stream"}},
        note="`stream()` is an async context manager (`async with`), not a coroutine",
    ),
    AsyncClient(
        ("httpx.Response", "httpx2.Response"),
        frozenset({"aread", "aclose"}),
        note="a streamed response (`async with client.stream(...) as r`)",
    ),
    AsyncClient(
        ("aiohttp.ClientSession", "aiohttp.client.ClientSession"),
        HTTP_VERBS | {"ws_connect", "close"},
        results={
            **{verb: "aiohttp.ClientResponse" for verb in HTTP_VERBS},
            "ws_connect": "aiohttp.ClientWebSocketResponse",
        },
        note="the verbs return an awaitable that is also an async context manager",
    ),
    AsyncClient(
        ("aiohttp.ClientResponse", "aiohttp.client.ClientResponse"),
        frozenset({"json", "text", "read", "wait_for_close"}),
        note="the response of `await session.post(...)` or `async with session.post(...)`",
    ),
    AsyncClient(
        ("aiohttp.ClientWebSocketResponse",),
        frozenset(
            {
                "send_str",
                "send_bytes",
                "send_json",
                "send_frame",
                "receive",
                "receive_str",
                "receive_bytes",
                "receive_json",
                "ping",
                "pong",
                "close",
            }
        ),
    ),
    AsyncClient(
        (
            "openai.AsyncOpenAI",
            "openai.AsyncAzureOpenAI",
            "AsyncOpenAI",
            "AsyncAzureOpenAI",
            "ArealOpenAI",
        ),
        _SDK_CLIENT_METHODS,
        frozenset({"create", "parse", "retrieve", "update", "delete", "cancel"}),
        note="`ArealOpenAI` (areal_runtime, AReaL) is an `AsyncOpenAI`; `.stream(...)` "
        "and `.list(...)` are entered with `async with`/`async for`, not reported",
    ),
    AsyncClient(
        (
            "anthropic.AsyncAnthropic",
            "AsyncAnthropic",
            "AsyncAnthropicBedrock",
            "AsyncAnthropicVertex",
        ),
        _SDK_CLIENT_METHODS,
        frozenset({"create", "parse", "count_tokens", "retrieve", "delete", "cancel"}),
        note="`messages.stream(...)` is an async context manager, not reported",
    ),
    # asyncio's own objects, by their exact names (``queue.Queue`` and ``threading.Lock`` are
    # other types with the same short names and plain methods)
    AsyncClient(
        ("asyncio.Queue", "asyncio.PriorityQueue", "asyncio.LifoQueue"),
        frozenset({"get", "put", "join"}),
        note="`get_nowait()`, `put_nowait()` and `task_done()` are plain calls",
    ),
    AsyncClient(
        ("asyncio.Lock", "asyncio.Semaphore", "asyncio.BoundedSemaphore"),
        frozenset({"acquire"}),
        note="usually entered with `async with`; `release()` is a plain call",
    ),
    AsyncClient(("asyncio.Event",), frozenset({"wait"}), note="`set()` is a plain call"),
    AsyncClient(("asyncio.Condition",), frozenset({"acquire", "wait", "wait_for"})),
    AsyncClient(("asyncio.Barrier",), frozenset({"wait", "reset", "abort"})),
    AsyncClient(
        ("asyncio.subprocess.Process", "asyncio.Process"),
        frozenset({"wait", "communicate"}),
        note="what `await asyncio.create_subprocess_exec(...)` (or `_shell`) gives; "
        "`kill()`, `terminate()` and `send_signal()` are plain calls",
    ),
    AsyncClient(
        ("asyncio.StreamReader",),
        frozenset({"read", "readline", "readexactly", "readuntil"}),
    ),
    AsyncClient(
        ("asyncio.StreamWriter",),
        frozenset({"drain", "wait_closed", "start_tls"}),
        note="`write()` and `close()` are plain calls",
    ),
)
# Called on any receiver (the engine is rarely typed): ``engine.agenerate(req)``, and methods
# whose name starts like an async API (``ainvoke``, ``aclose``...).
ASYNC_METHOD_PREFIXES = ("agenerate", "ainvoke", "acall", "arun", "aexecute", "astep", "areset",
                         "aclose", "acleanup", "acreate", "acomplete", "achat", "aembed")  # fmt: skip
# The runtime's coroutine functions, and the shared clients their getters give when awaited.
SHARED_CLIENT_GETTERS = {
    "get_httpx_client": "httpx.AsyncClient",
    "get_sdk_http_client": "httpx.AsyncClient",
    "get_aiohttp_session": "aiohttp.ClientSession",
}
RUNTIME_COROUTINES = frozenset({*SHARED_CLIENT_GETTERS, "close_shared_clients"})
# Coroutine functions whose awaited result is one of the objects above, by their last name.
AWAITED_RESULTS = {
    **SHARED_CLIENT_GETTERS,
    "create_subprocess_exec": "asyncio.subprocess.Process",
    "create_subprocess_shell": "asyncio.subprocess.Process",
}

_EXACT: dict[str, AsyncClient] = {}
_BARE: dict[str, AsyncClient] = {}
for _client in ASYNC_CLIENTS:
    for _name in _client.types:
        (_EXACT if "." in _name else _BARE)[_name] = _client
# A cheap first test: only calls of these method names can be a client's coroutine.
METHOD_NAMES = frozenset(name for c in ASYNC_CLIENTS for name in (*c.methods, *c.resource_methods))


def client_of(type_name: str | None) -> AsyncClient | None:
    """The table row for a receiver type (``openai.AsyncOpenAI``, ``x.y.ArealOpenAI``...)."""
    if type_name is None:
        return None
    row = _EXACT.get(type_name)
    if row is None:
        row = _BARE.get(type_name.rpartition(".")[2])
    return row


def is_coroutine_method(type_name: str | None, method: str, depth: int) -> bool:
    """Whether ``method``, ``depth`` attributes below a receiver of this type, is a coroutine."""
    row = client_of(type_name)
    if row is None:
        return False
    return method in (row.methods if depth == 0 else row.resource_methods)


def result_type(type_name: str | None, method: str) -> str | None:
    """What ``await receiver.method(...)`` (or ``async with``) gives, when the table says."""
    row = client_of(type_name)
    return row.results.get(method) if row is not None else None


def render_table() -> list[str]:
    """The table as Markdown rows, for docs/lint_rules.md."""
    lines = [
        "| client | coroutine methods | on its resources | note |",
        "|---|---|---|---|",
    ]
    for row in ASYNC_CLIENTS:
        names = ", ".join(f"`{t}`" for t in row.types)
        methods = ", ".join(f"`{m}`" for m in sorted(row.methods))
        resources = ", ".join(f"`.{m}`" for m in sorted(row.resource_methods)) or "-"
        lines.append(f"| {names} | {methods} | {resources} | {row.note or '-'} |")
    getters = ", ".join(f"`{g}`" for g in sorted(RUNTIME_COROUTINES))
    lines.append(
        f"| `workflow_context` (areal_runtime, AReaL) | {getters} | - | awaited, "
        + ", ".join(f"`{g}` gives an `{t}`" for g, t in SHARED_CLIENT_GETTERS.items())
        + " |"
    )
    prefixes = ", ".join(f"`{p}...`" for p in ASYNC_METHOD_PREFIXES)
    lines.append(
        f"| any receiver (the engine is rarely typed) | {prefixes} | - | "
        "`InferenceEngine.agenerate` of areal_runtime and AReaL, LangChain's `ainvoke`... |"
    )
    return lines
