# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit serve``: the agent proxy as a standalone endpoint, like AReaL's online mode.

Point any agent (the OpenAI or Anthropic SDK, LangChain, Claude Code, a CLI) at the printed base
URLs and key; every request is logged on one line, and the sessions are written as trajectories
(``areal-devkit view`` reads the file) periodically and on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.commands.workflow_args import engine_seed
from areal_devkit.engine_summary import prefix_cache_line
from areal_devkit.errors import UsageError, usage_errors

EXAMPLES = """examples:
  areal-devkit serve                                   # the embedded default model, port 8000
  areal-devkit serve --engine hf:./my-model --port 9000 --output my-sessions.jsonl
  areal-devkit serve --engine sglang:127.0.0.1:30000 --tokenizer hf:./my-model
then, in another shell:
  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=<the printed key>
"""
DEFAULT_PORT = 8000


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "serve",
        help="serve the agent proxy for any agent and record its sessions as trajectories",
        description="Serve the OpenAI- and Anthropic-compatible agent proxy on a model, log "
        "each request, and write the sessions as trajectories (view them with areal-devkit "
        "view).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--engine", default="local", help=runtime.ENGINE_SPECS.replace("scripted | ", "")
    )
    p.add_argument(
        "--tokenizer",
        help="hf:PATH; needed with sglang:/vllm: (the proxy renders chat templates itself)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0 picks a free one"
    )
    p.add_argument(
        "--output", default="serve-sessions.jsonl", help="trajectory file (.jsonl) to write"
    )
    p.add_argument(
        "--save-every", type=float, default=30.0, metavar="SECONDS", help="0: only on exit"
    )
    p.add_argument(
        "--log-requests",
        metavar="FILE.jsonl",
        help="also append every request (its whole body, status, error) to this file",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="the local engine's sampling seed (default 0: a fresh serve samples the same "
        "replies to the same requests; another seed draws others)",
    )
    p.add_argument("--admin-key", help="admin API key (default: a random one, printed)")
    p.set_defaults(handler=serve)


def check_args(args: argparse.Namespace) -> Path:
    """Refuse bad options before a model loads; returns the output path."""
    if not 0 <= args.port < 65536:
        raise UsageError(f"--port must be in 0..65535, got {args.port}")
    if not args.save_every >= 0:
        raise UsageError(f"--save-every must be >= 0 seconds, got {args.save_every}")
    output = Path(args.output)
    if output.suffix != ".jsonl":
        raise UsageError(f"--output must end in .jsonl (areal-devkit view reads it), got {output}")
    if not output.resolve().parent.is_dir():
        raise UsageError(f"the folder of {output} does not exist; create it first")
    if args.log_requests and not Path(args.log_requests).resolve().parent.is_dir():
        raise UsageError(f"the folder of {args.log_requests} does not exist; create it first")
    if args.engine.startswith("scripted"):
        raise UsageError("--engine scripted replays a dataset's answers; serve a model instead")
    engine_seed(args)  # refused for a remote server before the port check and the model load
    check_port_free(args.host, args.port)
    return output


def check_port_free(host: str, port: int) -> None:
    """Fail in a second, not after the model loads, when the port is taken (the server's own
    bind still reports a port taken in between)."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass --port N "
                "(0 picks a free port) or another --host"
            ) from None


def load_tokenizer(spec: str | None, engine: Any) -> Any:
    if spec is None:
        tokenizer = getattr(engine, "tokenizer", None)
        if tokenizer is None:
            raise UsageError(
                "this engine has no tokenizer of its own; pass --tokenizer hf:PATH (the "
                "model's folder), the proxy renders chat templates with it"
            )
        return tokenizer
    if not spec.startswith("hf:"):
        raise UsageError(f"--tokenizer must be hf:PATH, got {spec!r}")

    try:
        return runtime.load_hf_tokenizer(spec[3:])
    except OSError as exc:
        raise UsageError(f"--tokenizer {spec}: cannot load a tokenizer there ({exc})") from None


def view_command(args: argparse.Namespace, output: Path) -> str:
    """``areal-devkit view`` for the file, with the tokenizer that decodes its tokens."""
    tokenizer = args.tokenizer or (args.engine if args.engine.startswith("hf:") else None)
    return f"areal-devkit view {output}" + (f" --tokenizer {tokenizer}" if tokenizer else "")


def emit(line: str) -> None:
    print(line, flush=True)


def serve(args: argparse.Namespace) -> int:
    from areal_devkit.serving.server import ServeOptions, serve_proxy

    output = check_args(args)
    with usage_errors():  # --engine is the user's input
        engine = runtime.engine_from_spec(args.engine, **engine_seed(args))
    try:
        tokenizer = load_tokenizer(args.tokenizer, engine)
        options = ServeOptions(
            host=args.host,
            port=args.port,
            output=output,
            save_every_s=args.save_every,
            admin_api_key=args.admin_key,
            engine_name="the embedded default model" if args.engine == "local" else args.engine,
            view_command=view_command(args, output),
            requests_file=Path(args.log_requests) if args.log_requests else None,
        )
        written = asyncio.run(serve_proxy(engine, tokenizer, options, emit))
    finally:
        close = getattr(engine, "close", None)
        if close is not None:
            close()
    if cache_line := prefix_cache_line(engine):
        print(cache_line, flush=True)
    print(f"wrote {written} session(s) to {output}; view them: {options.view_command}", flush=True)
    return 0
