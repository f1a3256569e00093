# SPDX-License-Identifier: Apache-2.0
"""Serve a LocalEngine over SGLang's ``/generate`` protocol on loopback.

This lets ``RemoteEngine`` be tested end to end (two processes, a real socket) with no GPU:
``python -m areal_runtime.engine.local.server --model default --port 0`` prints
``listening on 127.0.0.1:PORT``. ``--abort-every N`` cuts each request's first answer after N
tokens with ``finish_reason: abort``, as a server does while it loads new weights.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
from dataclasses import dataclass
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest


def _gconfig(params: dict[str, Any]) -> GenerationHyperparameters:
    temperature = float(params.get("temperature", 1.0))
    top_k = int(params.get("top_k", -1))
    return GenerationHyperparameters(
        max_new_tokens=int(params.get("max_new_tokens", 128)),
        min_new_tokens=int(params.get("min_new_tokens", 0)),
        temperature=temperature,
        greedy=temperature == 0.0,
        top_p=float(params.get("top_p", 1.0)),
        top_k=top_k if top_k > 0 else int(1e8),
        stop_token_ids=list(params.get("stop_token_ids") or []),
        ignore_eos=bool(params.get("ignore_eos", False)),
        stop=params.get("stop") or None,
        frequency_penalty=float(params.get("frequency_penalty", 0.0)),
    )


def create_app(engine: Any, *, abort_every: int | None = None) -> Any:
    from aiohttp import web

    seen: set[tuple[int, ...]] = set()

    async def generate(request: web.Request) -> web.Response:
        try:
            body = await request.json()
            g = _gconfig(body.get("sampling_params") or {})
            input_ids = [int(t) for t in body["input_ids"]]
        except (ValueError, KeyError, TypeError) as exc:
            return web.json_response({"error": f"bad request: {exc}"}, status=400)
        abort = abort_every is not None and tuple(input_ids) not in seen
        if abort:
            seen.add(tuple(input_ids))
            g = g.new(max_new_tokens=min(g.max_new_tokens, abort_every))
        try:
            resp = await engine.agenerate(ModelRequest(input_ids=input_ids, gconfig=g))
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        finish = resp.stop_reason
        if abort and finish == "length" and resp.output_len == abort_every:
            finish = "abort"
        return web.json_response(
            {
                "text": "",
                "meta_info": {
                    "prompt_tokens": resp.input_len,
                    "completion_tokens": resp.output_len,
                    "output_token_logprobs": [
                        [lp, tok, None]
                        for lp, tok in zip(resp.output_logprobs, resp.output_tokens, strict=True)
                    ],
                    "finish_reason": {"type": finish},
                },
            }
        )

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/generate", generate)
    app.router.add_get("/health", health)
    return app


@dataclass
class SGLangServer:
    """A running server: ``address`` is ``host:port``; ``await close()`` stops it."""

    address: str
    runner: Any

    async def close(self) -> None:
        await self.runner.cleanup()


async def serve(engine: Any, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> SGLangServer:
    """Start serving ``engine`` on ``host:port`` (0 lets the OS choose the port)."""
    from aiohttp import web

    sock = socket.socket()
    sock.bind((host, port))
    runner = web.AppRunner(create_app(engine, **kwargs), access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return SGLangServer(f"{host}:{sock.getsockname()[1]}", runner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="default", help="'default' or a local HF model directory"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--abort-every", type=int)
    args = parser.parse_args()
    from areal_runtime.engine.local import LocalEngine

    engine = (
        LocalEngine.default()
        if args.model == "default"
        else LocalEngine.from_pretrained(args.model)
    )

    async def run() -> None:
        server = await serve(engine, args.host, args.port, abort_every=args.abort_every)
        print(f"listening on {server.address}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()


if __name__ == "__main__":
    main()
