# SPDX-License-Identifier: Apache-2.0
"""``RemoteEngine``: the same ``agenerate`` against SGLang or vLLM servers over HTTP.

How AReaL scales out: several server addresses, round-robin with per-``rid`` affinity (so a
multi-turn conversation keeps its server's prefix cache), retries with backoff on connection
errors and 5xx, and resubmission after ``abort`` with the tokens produced so far (the server
aborts in-flight requests while it loads new weights); per-token versions show the switch.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.engine._contract import validate_request
from areal_runtime.engine.remote.backends import BACKENDS, Chunk
from areal_runtime.errors import ServerUnreachableError
from areal_runtime.utils.image import image2base64


class RemoteEngine(InferenceEngine):
    """Generate on remote inference servers (``backend="sglang"`` or ``"vllm"``)."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        backend: str = "sglang",
        tokenizer: Any = None,
        vocab_size: int | None = None,
        request_retries: int = 3,
        retry_backoff_s: float = 0.5,
        request_timeout_s: float = 3600.0,
        max_resubmits: int = 64,
        affinity_size: int = 128,
    ) -> None:
        addresses = [a.strip().removeprefix("http://").rstrip("/") for a in addresses if a.strip()]
        if not addresses:
            raise ValueError("RemoteEngine needs at least one server address like 127.0.0.1:30000")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; use one of {sorted(BACKENDS)}")
        self.addresses = addresses
        self.backend = BACKENDS[backend]()
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.request_retries = request_retries
        self.retry_backoff_s = retry_backoff_s
        self.request_timeout_s = request_timeout_s
        self.max_resubmits = max_resubmits
        self._round_robin = itertools.cycle(addresses)
        self._affinity: OrderedDict[str, str] = OrderedDict()
        self._affinity_size = affinity_size
        self._version = 0

    def get_version(self) -> int:
        return self._version

    def set_version(self, version: int) -> None:
        self._version = version

    def choose_server(self, rid: str) -> str:
        """The server that served ``rid`` before, else the next one round-robin."""
        if rid in self._affinity:
            self._affinity.move_to_end(rid)
            return self._affinity[rid]
        address = next(self._round_robin)
        self._affinity[rid] = address
        if len(self._affinity) > self._affinity_size:
            self._affinity.popitem(last=False)
        return address

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        start = time.perf_counter()
        req = req.copy()
        budget = validate_request(req, self.vocab_size)
        address = self.choose_server(req.rid)
        tokens: list[int] = []
        logprobs: list[float] = []
        versions: list[int] = []
        finish = "abort"
        images = image2base64(req.image_data) if req.image_data else None
        for _ in range(self.max_resubmits):
            remaining = budget - len(tokens)
            if remaining <= 0:
                break
            payload = self.backend.build(req.input_ids + tokens, req.gconfig, remaining, images)
            version = self._version
            chunk: Chunk = self.backend.parse(await self._post(address, payload))
            tokens += chunk.tokens
            logprobs += chunk.logprobs
            versions += [version] * len(chunk.tokens)
            finish = chunk.finish
            if finish != "abort":
                break
        latency = time.perf_counter() - start
        return ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=tokens,
            output_logprobs=logprobs,
            output_versions=versions,
            stop_reason="length" if finish == "abort" else finish,  # type: ignore[arg-type]
            tokenizer=req.tokenizer if req.tokenizer is not None else self.tokenizer,
            processor=req.processor,
            input_images=list(req.image_data or []),
            latency=latency,
            ttft=latency,
        )

    async def _post(self, address: str, payload: dict) -> Any:
        import aiohttp

        from areal_runtime import workflow_context

        session = await workflow_context.get_aiohttp_session()
        url = f"http://{address}{self.backend.endpoint}"
        last_error = ""
        for attempt in range(self.request_retries + 1):
            if attempt:
                await asyncio.sleep(self.retry_backoff_s * 2 ** (attempt - 1))
            try:
                async with session.post(
                    url, json=payload, timeout=aiohttp.ClientTimeout(total=self.request_timeout_s)
                ) as resp:
                    if resp.status >= 500:
                        last_error = f"HTTP {resp.status}: {(await resp.text())[:200]}"
                        continue
                    if resp.status >= 400:
                        raise ValueError(
                            f"{url} refused the request: HTTP {resp.status}: "
                            f"{(await resp.text())[:300]}"
                        )
                    return await resp.json()
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
        raise ServerUnreachableError(
            f"could not get an answer from {url} after {self.request_retries + 1} attempts "
            f"({last_error}); check that the server is running and serves {self.backend.endpoint}"
        )
