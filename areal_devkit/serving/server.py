# SPDX-License-Identifier: Apache-2.0
"""Run the agent proxy as a standalone endpoint until Ctrl-C / SIGTERM.

The proxy is started through ``AgentProxy``'s own socket startup (so its server fixes apply
here too), with the request log as a middleware of its app. One session is opened at start and its key printed;
more come from ``POST /rl/start_session`` with the admin key, as in AReaL's online mode. The
sessions are written to the trajectory file every ``save_every_s`` seconds and on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.middleware import Middleware

from areal_devkit import runtime_facade as runtime
from areal_devkit.errors import UsageError
from areal_devkit.serving.addresses import exposure_warning, reachable_hosts, url_host
from areal_devkit.serving.request_log import RequestFile, RequestLog
from areal_devkit.serving.session_file import SessionFile

FIRST_SESSION_TASK_ID = "serve"
# Ctrl-C, kill, and a closed terminal all stop the server after writing the trajectories.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@dataclass(frozen=True)
class ServeOptions:
    host: str
    port: int
    output: Path
    save_every_s: float  # 0: only on shutdown
    admin_api_key: str | None = None
    engine_name: str = "local"
    view_command: str = ""  # how to view the file (with the tokenizer of a model of one's own)
    requests_file: Path | None = None  # every request body as JSONL, for a close look


def base_urls(host: str, port: int) -> list[str]:
    """The URLs a client can use, loopback first (never ``http://0.0.0.0``)."""
    return [f"http://{url_host(h)}:{port}" for h in reachable_hosts(host)]


def banner(options: ServeOptions, urls: list[str], session: Any, admin_key: str) -> str:
    """What a person needs to point an agent at the proxy, ready to paste."""
    base_url = urls[0]
    openai_url, anthropic_url = f"{base_url}/v1", base_url
    saving = (
        f"every {options.save_every_s:g} s and on Ctrl-C" if options.save_every_s else "on Ctrl-C"
    )
    return "\n".join(
        [
            f"areal-devkit serve: the agent proxy on {options.engine_name}",
            f"  OpenAI base URL     {openai_url}",
            f"  Anthropic base URL  {anthropic_url}",
            *(f"  also reachable at   {url}" for url in urls[1:]),
            f"  API key             {session.api_key}   (session {session.session_id})",
            f"  admin key           {admin_key}   (POST /rl/start_session for another session)",
            f"  trajectories        {options.output} ({saving}); {options.view_command}",
            *(
                [f"  request bodies      {options.requests_file} (one JSON line per request)"]
                if options.requests_file is not None
                else []
            ),
            "point an agent at it:",
            f"  export OPENAI_BASE_URL={openai_url} OPENAI_API_KEY={session.api_key}",
            f"  export ANTHROPIC_BASE_URL={anthropic_url} ANTHROPIC_API_KEY={session.api_key}",
            "one line per request follows; Ctrl-C stops and writes the trajectories",
        ]
    )


async def serve_proxy(
    engine: Any, tokenizer: Any, options: ServeOptions, emit: Callable[[str], None]
) -> int:
    """Serve until SIGINT, SIGTERM or SIGHUP; returns the number of sessions written at the end."""
    stop = asyncio.Event()
    async with contextlib.AsyncExitStack() as stack:
        record = None
        if options.requests_file is not None:
            record = stack.enter_context(RequestFile(options.requests_file))
        proxy = runtime.AgentProxy(
            engine,
            tokenizer,
            transport="socket",
            host=options.host,
            port=options.port,
            admin_api_key=options.admin_api_key,
            middleware=[Middleware(RequestLog, emit=emit, record=record)],
        )
        sessions = SessionFile(proxy.state, options.output)
        # A session ended or refreshed (/rl/end_session, /rl/start_session with its key) is
        # exported at once: written to the file, whatever --save-every says.
        proxy.gateway.on_session_end.append(lambda _session: sessions.write())
        try:
            await stack.enter_async_context(proxy)
        except OSError as exc:  # the port is taken, or the address is not this machine's
            raise UsageError(
                f"cannot listen on {options.host}:{options.port} ({exc.strerror or exc}); "
                "pass --port N (0 picks a free port) or another --host"
            ) from None
        # After the server is up: its own handlers would stop it before the file is written.
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
        first = proxy.state.start_session(FIRST_SESSION_TASK_ID)
        warning = exposure_warning(options.host, proxy.port, options.admin_api_key is not None)
        if warning is not None:
            emit(warning)
        emit(banner(options, base_urls(options.host, proxy.port), first, proxy.admin_api_key))
        saver = asyncio.create_task(_save_periodically(sessions, options.save_every_s, stop))
        try:
            await stop.wait()
        finally:
            saver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await saver
            written = sessions.write()
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
    return written


async def _save_periodically(sessions: SessionFile, every_s: float, stop: asyncio.Event) -> None:
    if every_s <= 0:
        return
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every_s)
        if not stop.is_set():
            sessions.write()
