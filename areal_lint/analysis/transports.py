# SPDX-License-Identifier: Apache-2.0
"""Where an LLM client's or an HTTP client's transport comes from, read by ARL301-306.

A transport (``http_client=``) is *shared* when it is the workflow's shared client (``await
workflow_context.get_httpx_client()``, ``kwargs["http_client"]``), a ``self`` attribute or a
parameter; *optional* when it is ``kwargs.get("http_client")`` (None when the caller passes
none, and the SDK then builds a private pool); and *in-process* when the client serves an app
through ``ASGITransport``/``WSGITransport``/``MockTransport`` and opens no connection at all.
"""

from __future__ import annotations

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.names import dotted, self_attr

HTTP_POOLS = {
    "httpx.AsyncClient",
    "httpx.Client",
    "aiohttp.ClientSession",
    "aiohttp.TCPConnector",
    "requests.Session",
    "httpx2.AsyncClient",
    "httpx2.Client",
}
# Transports that serve an app in-process: a client over one opens no connections.
IN_PROCESS_TRANSPORTS = ("ASGITransport", "WSGITransport", "MockTransport")
TRANSPORT_KWARGS = {"http_client", "http_async_client"}


OPTIONAL_TRANSPORT = "<optional http_client>"
SHARED_TRANSPORT = "<shared http_client>"


def transport_kind(expr: cst.BaseExpression) -> str | None:
    """Where an ``http_client`` value comes from: an optional ``.get`` or a shared client."""
    if optional_get(expr):
        return OPTIONAL_TRANSPORT
    if isinstance(expr, cst.Await) and isinstance(expr.expression, cst.Call):
        name = dotted(expr.expression.func) or ""
        if name.endswith(("get_httpx_client", "get_aiohttp_session")):
            return SHARED_TRANSPORT
    if isinstance(expr, cst.Subscript) and "http_client" in cst.Module(body=[]).code_for_node(
        expr.slice[0]
    ):
        return SHARED_TRANSPORT
    return None


def optional_get(expr: cst.BaseExpression) -> bool:
    """``x.get("http_client")`` or ``x.get("http_client", None)``: may give no client at all."""
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


class Transports:
    """Locals bound to an ``http_client`` value, per function: what ARL305/306 ask about.

    A local bound to a constructor call is recorded as None: it shadows an outer local of the
    same name, exactly as the shared context's constructor types do.
    """

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self.frames: list[dict[str, str | None]] = [{}]

    def kind_of(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Name):
            for frame in reversed(self.frames[1:]):
                if expr.value in frame:
                    return frame[expr.value]
        return None

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def bind(self, node: cst.Assign) -> None:
        if len(self.frames) < 2 or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if not isinstance(target, cst.Name):
            return
        kind = transport_kind(node.value)
        if kind is not None:
            self.frames[-1][target.value] = kind
        elif isinstance(node.value, cst.Call) and self.ctx.resolve(node.value.func):
            self.frames[-1][target.value] = None


def in_process_transport(ctx: LintContext, call: cst.Call) -> bool:
    """``httpx.AsyncClient(transport=httpx.ASGITransport(app))``: no pool, nothing to share."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value != "transport":
            continue
        kind = ctx.receiver_type(arg.value)
        return kind is not None and kind.endswith(IN_PROCESS_TRANSPORTS)
    return False


def transport_arg(call: cst.Call) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword and a.keyword.value in TRANSPORT_KWARGS), None)


def is_shared_transport(ctx: LintContext, expr: cst.BaseExpression, transports: Transports) -> bool:
    """A transport someone else owns: the shared client, a ``self`` attribute, a parameter."""
    if transport_kind(expr) == SHARED_TRANSPORT:
        return True
    if self_attr(expr) is not None:
        return True
    if isinstance(expr, cst.Name):
        info = ctx.frame.info
        params = {p.name.value for p in info.node.params.params} if info else set()
        return (
            transports.kind_of(expr) in (SHARED_TRANSPORT, OPTIONAL_TRANSPORT)
            or expr.value in params
        )
    return False
