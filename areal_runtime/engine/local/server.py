# SPDX-License-Identifier: Apache-2.0
"""Serve a LocalEngine over SGLang's ``/generate`` protocol on loopback.

This lets ``RemoteEngine`` be tested end to end (two processes, a real socket) with no GPU:
``python -m areal_runtime.engine.local.server --model default --port 0`` prints
``listening on 127.0.0.1:PORT``. ``--abort-every N`` cuts each request's first answer after N
tokens with ``finish_reason: abort``, as a server does while it loads new weights.

A Starlette app on the runtime's one host (``utils/asgi_host.py``, uvicorn, as the agent proxy
is served). Like the proxy it reads bodies within ``max_body_bytes`` (``utils/http_body.py``)
and cancels the engine call of a client that disconnects (``utils/client_disconnect.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from typing import Any

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest
from areal_runtime.engine._contract import NO_TOTAL_CAP
from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.utils.asgi_host import ServedApp, serve_app
from areal_runtime.utils.client_disconnect import (
    ClientGone,
    DisconnectWatch,
    client_gone_response,
)
from areal_runtime.utils.http_body import BodyTooLarge, read_capped

# The server's name for the one limits type the agent proxy uses too; the fields it checks are
# max_body_bytes, max_input_ids, max_new_tokens, max_stop, max_stop_chars and max_token_id,
# all in :func:`parse_generate` (``docs/runtime.md``, "Limits").
ServerLimits = RequestLimits
_DEFAULT_LIMITS = RequestLimits()


# Top-level fields RemoteEngine (and SGLang clients) send that this server accepts and ignores.
_IGNORED_FIELDS = {"return_logprob", "image_data", "rid", "return_text_in_logprobs"}
_SAMPLING_FIELDS = {
    "max_new_tokens", "min_new_tokens", "temperature", "top_p", "top_k", "stop_token_ids",
    "ignore_eos", "skip_special_tokens", "stop", "frequency_penalty",
}  # fmt: skip


class GenerateRequestError(ValueError):
    """A ``/generate`` body this server refuses: ``field`` names what is wrong."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.status = status


def decode_body(raw: bytes, limits: RequestLimits) -> Any:
    """The JSON value of ``raw``: UTF-8, at most ``max_body_bytes``.

    NaN and Infinity parse (Python's json reads them) so that the field check that refuses
    them can name the field.
    """
    if len(raw) > limits.max_body_bytes:
        raise GenerateRequestError(
            "body", f"{len(raw)} bytes is over the limit of {limits.max_body_bytes}", 413
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GenerateRequestError("body", "the request body is not UTF-8") from None
    except RecursionError:
        raise GenerateRequestError("body", "the JSON is nested too deeply") from None
    except ValueError as exc:
        raise GenerateRequestError("body", f"the request body is not valid JSON: {exc}") from None


def _int(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise GenerateRequestError(f"sampling_params.{key}", f"must be an integer, got {value!r}")
    if not low <= value <= high:
        raise GenerateRequestError(
            f"sampling_params.{key}", f"must be between {low} and {high}, got {value}"
        )
    return value


def _float(params: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise GenerateRequestError(f"sampling_params.{key}", f"must be a number, got {value!r}")
    if not low <= value <= high:
        raise GenerateRequestError(
            f"sampling_params.{key}", f"must be between {low} and {high}, got {value}"
        )
    return float(value)


def _bool(params: dict[str, Any], key: str, default: bool = False) -> bool:
    value = params.get(key, default)
    if not isinstance(value, bool):
        raise GenerateRequestError(
            f"sampling_params.{key}", f"must be true or false, got {value!r}"
        )
    return value


def _token_ids(value: Any, field: str, limits: RequestLimits, most: int) -> list[int]:
    if not isinstance(value, list):
        raise GenerateRequestError(
            field, f"must be a list of token ids, got {type(value).__name__}"
        )
    if len(value) > most:
        raise GenerateRequestError(field, f"has {len(value)} ids; the limit is {most}")
    for i, t in enumerate(value):
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= limits.max_token_id:
            raise GenerateRequestError(
                f"{field}[{i}]", f"must be a token id in [0, {limits.max_token_id}], got {t!r}"
            )
    return list(value)


def _stop(value: Any, limits: RequestLimits) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or len(value) > limits.max_stop:
        raise GenerateRequestError(
            "sampling_params.stop", f"must be a string or a list of at most {limits.max_stop}"
        )
    for i, s in enumerate(value):
        if not isinstance(s, str) or not 0 < len(s) <= limits.max_stop_chars:
            raise GenerateRequestError(
                f"sampling_params.stop[{i}]",
                f"must be a non-empty string of at most {limits.max_stop_chars} characters",
            )
    return value or None


def parse_generate(
    body: Any, limits: RequestLimits = _DEFAULT_LIMITS
) -> tuple[list[int], GenerationHyperparameters]:
    """The prompt and sampling options of a ``/generate`` body; raises GenerateRequestError."""
    if not isinstance(body, dict):
        raise GenerateRequestError("body", f"must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - {"input_ids", "sampling_params", "stream"} - _IGNORED_FIELDS)
    if unknown:
        raise GenerateRequestError(unknown[0], f"is not a field this server accepts: {unknown}")
    if body.get("stream", False) is not False:
        raise GenerateRequestError("stream", "this server does not stream; send false")
    if "input_ids" not in body:
        raise GenerateRequestError("input_ids", "is required (this server takes no text)")
    input_ids = _token_ids(body["input_ids"], "input_ids", limits, limits.max_input_ids)
    if not input_ids:
        raise GenerateRequestError("input_ids", "must hold at least one token")
    params = body.get("sampling_params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise GenerateRequestError("sampling_params", "must be an object")
    unknown = sorted(set(params) - _SAMPLING_FIELDS)
    if unknown:
        raise GenerateRequestError(
            f"sampling_params.{unknown[0]}", "is not a sampling option this server accepts"
        )
    default_new = min(128, limits.max_new_tokens)
    max_new = _int(params, "max_new_tokens", default_new, 1, limits.max_new_tokens)
    temperature = _float(params, "temperature", 1.0, 0.0, 1e6)
    top_k = _int(params, "top_k", -1, -1, 2**31 - 1)
    if top_k == 0:
        raise GenerateRequestError("sampling_params.top_k", "must be -1 (off) or >= 1, got 0")
    return input_ids, GenerationHyperparameters(
        max_new_tokens=max_new,
        # SGLang's /generate has no prompt + completion cap: the engine's token_budget cuts
        # max_new_tokens at the model's positions, not at the dataclass default of 32768.
        max_tokens=NO_TOTAL_CAP,
        min_new_tokens=_int(params, "min_new_tokens", 0, 0, max_new),
        temperature=temperature,
        greedy=temperature == 0.0,
        top_p=_float(params, "top_p", 1.0, 1e-9, 1.0),
        top_k=top_k if top_k > 0 else int(1e8),
        stop_token_ids=_token_ids(
            params.get("stop_token_ids") or [],
            "sampling_params.stop_token_ids",
            limits,
            limits.max_stop,
        ),
        ignore_eos=_bool(params, "ignore_eos"),
        skip_special_tokens=_bool(params, "skip_special_tokens", default=True),
        stop=_stop(params.get("stop"), limits),
        frequency_penalty=_float(params, "frequency_penalty", 0.0, -2.0, 2.0),
    )


def _json(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    """A JSON response that keeps NaN and Infinity, as Python's json (RemoteEngine) reads them.

    A logprob can be -inf (or NaN at an extreme temperature); Starlette's JSONResponse would
    refuse the whole answer with a 500, and the server has always sent them as they are.
    """
    from starlette.responses import Response

    return Response(
        json.dumps(content), status_code=status, headers=headers, media_type="application/json"
    )


def _refusal(exc: GenerateRequestError) -> Any:
    # After a 413 the rest of the body is not wanted: closing tells the client to stop sending.
    headers = {"connection": "close"} if exc.status == 413 else None
    return _json({"error": str(exc), "field": exc.field}, exc.status, headers)


def generate_answer(resp: Any, finish: str) -> dict[str, Any]:
    """SGLang's ``/generate`` answer for one engine response (what ``RemoteEngine`` reads)."""
    return {
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


def create_app(
    engine: Any, *, abort_every: int | None = None, limits: RequestLimits | None = None
) -> Any:
    """The Starlette app: ``POST /generate`` and ``GET /health``.

    A body over ``limits.max_body_bytes`` is a 413 before the rest of it is read; a client that
    disconnects while its request generates cancels the engine call (SGLang aborts such a
    request too), which frees its slot in the engine's batch.
    """
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    limits = limits or RequestLimits()
    seen: set[tuple[int, ...]] = set()

    async def generate(request: Request) -> Response:
        try:
            try:
                raw = await read_capped(request, limits.max_body_bytes)
            except BodyTooLarge as exc:
                raise GenerateRequestError("body", str(exc), 413) from None
            input_ids, g = parse_generate(decode_body(raw, limits), limits)
        except GenerateRequestError as exc:
            return _refusal(exc)
        abort = abort_every is not None and tuple(input_ids) not in seen
        if abort:
            seen.add(tuple(input_ids))
            g = g.new(max_new_tokens=min(g.max_new_tokens, abort_every))
        watch = DisconnectWatch(request)
        try:
            resp = await watch.run(engine.agenerate(ModelRequest(input_ids=input_ids, gconfig=g)))
        except ClientGone:
            return client_gone_response()
        except ValueError as exc:  # the engine's own contract (vocabulary, room to generate)
            return _json({"error": str(exc), "field": "input_ids"}, 400)
        finally:
            await watch.close()
        finish = resp.stop_reason
        if abort and finish == "length" and resp.output_len == abort_every:
            finish = "abort"
        return _json(generate_answer(resp, finish))

    async def health(_request: Request) -> Response:
        return _json({"ok": True})

    return Starlette(
        routes=[
            Route("/generate", generate, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


# What ``serve`` returns: ``address`` is ``host:port``, ``await close()`` stops it.
SGLangServer = ServedApp


async def serve(engine: Any, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> ServedApp:
    """Start serving ``engine`` on ``host:port`` (0 lets the OS choose the port).

    On the runtime's one host (``utils/asgi_host.py``), the agent proxy's too.
    """
    return await serve_app(create_app(engine, **kwargs), host, port)


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
        await server.wait()  # until SIGINT or SIGTERM

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()


if __name__ == "__main__":
    main()
