# SPDX-License-Identifier: Apache-2.0
"""``LocalEngine``: a transformers model served to concurrent ``agenerate`` callers.

A single worker thread runs the model with continuous batching (see ``batching.py``); the event
loop only enqueues requests and awaits futures that the worker resolves with
``call_soon_threadsafe``, so it is never blocked. If the worker dies, every pending and later
call fails with the cause instead of hanging.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import time
from pathlib import Path
from typing import Any

from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.engine._contract import stop_ids_for, validate_request
from areal_runtime.engine.local.batching import BatchRunner, BatchState, Row
from areal_runtime.engine.local.sampling import SamplingParams
from areal_runtime.errors import EngineDeadError


class LocalEngine(InferenceEngine):
    """Serve a local Hugging Face causal LM with continuous batching on one worker thread."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        max_batch: int = 32,
        max_prefill_tokens: int = 4096,
        raw_logprobs: bool = False,
        num_threads: int | None = 1,
        seed: int = 0,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_batch = max_batch
        self.max_prefill_tokens = max_prefill_tokens
        self.num_threads = num_threads
        # Public so consistency checks recompute logprobs with the engine's semantics.
        self.raw_logprobs = raw_logprobs
        config = model.config
        self.vocab_size = int(config.vocab_size)
        self.max_positions = getattr(config, "max_position_embeddings", None)
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(config, "pad_token_id", None) or 0
        self._runner = BatchRunner(
            model,
            pad_id=int(pad),
            decode=self._decode,
            raw_logprobs=raw_logprobs,
            seed=seed,
        )
        self._version = 0
        self._incoming: queue.SimpleQueue[Row | None] = queue.SimpleQueue()
        self._weight_updates: queue.SimpleQueue[tuple[dict, concurrent.futures.Future]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._dead: BaseException | None = None
        self._waiting: list[Row] = []

    @classmethod
    def from_pretrained(cls, path: str | Path, **kwargs: Any) -> LocalEngine:
        """Load a local HF model directory (and its tokenizer, if it has one)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(
                f"{path} is not a Hugging Face model directory (no config.json); save one with "
                "model.save_pretrained(path) or areal_runtime.models.default_model.save_default_model"
            )
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype="float32")
        tokenizer = kwargs.pop("tokenizer", None)
        if tokenizer is None:
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        return cls(model, tokenizer, **kwargs)

    @classmethod
    def default(cls, **kwargs: Any) -> LocalEngine:
        """The embedded default model (tiny, trained on arithmetic), no download needed."""
        from areal_runtime.models.default_model import load_default_model

        model, tokenizer = load_default_model()
        return cls(model, tokenizer, **kwargs)

    def get_version(self) -> int:
        return self._version

    def set_version(self, version: int) -> None:
        self._version = version

    def update_weights(self, state_dict: dict[str, Any]) -> concurrent.futures.Future:
        """Load ``state_dict`` between decode steps and bump the version.

        Returns a future that resolves to the new version; tokens generated after the switch
        carry it in ``output_versions``.
        """
        done: concurrent.futures.Future = concurrent.futures.Future()
        self._ensure_started()
        self._weight_updates.put((state_dict, done))
        self._incoming.put(None)  # wake an idle worker
        return done

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        req = req.copy()
        budget = validate_request(req, self.vocab_size)
        if self.max_positions is not None:
            room = self.max_positions - len(req.input_ids)
            if room <= 0:
                raise ValueError(
                    f"the prompt has {len(req.input_ids)} tokens but the model supports "
                    f"{self.max_positions} positions; shorten the prompt"
                )
            budget = min(budget, room)
        self._check_alive()
        self._ensure_started()
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        g = req.gconfig

        def on_done(row: Row, error: BaseException | None) -> None:
            # The caller's loop may be closed already: then nobody waits for this row.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, row, error)

        row = Row(
            prompt=list(req.input_ids),
            budget=budget,
            params=SamplingParams(
                greedy=g.greedy,
                temperature=g.temperature,
                top_p=g.top_p,
                top_k=g.top_k if g.top_k > 0 else self.vocab_size,
                frequency_penalty=g.frequency_penalty,
            ),
            stop_ids=stop_ids_for(req, self.tokenizer),
            stop_strings=list(g.stop or []),
            min_new_tokens=g.min_new_tokens,
            on_done=on_done,
        )
        self._incoming.put(row)
        try:
            await future
        except asyncio.CancelledError:
            row.cancelled = True
            raise
        latency = time.perf_counter() - row.submitted
        return ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=row.tokens,
            output_logprobs=row.logprobs,
            output_versions=row.versions,
            stop_reason=row.stop_reason or "length",  # type: ignore[arg-type]
            tokenizer=req.tokenizer if req.tokenizer is not None else self.tokenizer,
            processor=req.processor,
            input_images=list(req.image_data or []),
            latency=latency,
            ttft=(row.first_token_at or time.perf_counter()) - row.submitted,
        )

    async def serve_sglang(self, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> Any:
        """Serve this engine over SGLang's ``/generate``; returns a runner with ``.address``."""
        from areal_runtime.engine.local.server import serve

        return await serve(self, host, port, **kwargs)

    def close(self) -> None:
        """Stop the worker thread; pending calls fail with EngineDeadError."""
        self._closed = True
        if self._thread is not None:
            self._incoming.put(None)
            self._thread.join()
            self._thread = None

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> LocalEngine:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.close)

    def _decode(self, tokens: list[int]) -> str:
        if self.tokenizer is None:
            return ""
        return self.tokenizer.decode(tokens, skip_special_tokens=False)

    def _check_alive(self) -> None:
        if self._dead is not None:
            raise EngineDeadError(
                f"LocalEngine's worker thread died: {type(self._dead).__name__}: {self._dead}"
            ) from self._dead
        if self._closed:
            raise EngineDeadError("LocalEngine is closed")

    def _ensure_started(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._worker, name="areal-local-engine", daemon=True
                )
                self._thread.start()

    def _worker(self) -> None:
        import torch

        if self.num_threads:
            torch.set_num_threads(self.num_threads)
        state = BatchState()
        try:
            while not self._closed:
                self._apply_weight_updates()
                self._admit(state, block=not state.rows)
                if self._closed:
                    break
                if state.rows:
                    self._runner.decode_step(state, self._version)
                    self._finish(state)
        except BaseException as exc:  # every waiter must learn the cause
            self._dead = exc
            self._fail_all(state, exc)
            return
        self._fail_all(state, EngineDeadError("LocalEngine was closed while the request ran"))

    def _fail_all(self, state: BatchState, error: BaseException) -> None:
        # The queue may also hold None wake-ups (from close and update_weights).
        pending = state.rows + self._waiting + [r for r in _drain(self._incoming) if r is not None]
        for row in pending:
            row.on_done(row, error)

    def _apply_weight_updates(self) -> None:
        while True:
            try:
                state_dict, done = self._weight_updates.get_nowait()
            except queue.Empty:
                return
            try:
                self.model.load_state_dict(state_dict, strict=False)
                self._version += 1
                done.set_result(self._version)
            except Exception as exc:
                done.set_exception(exc)

    def _admit(self, state: BatchState, block: bool) -> None:
        """Prefill waiting requests that fit, then merge them into the running batch."""
        if block and not self._waiting:
            first = self._incoming.get()
            if first is not None:
                self._waiting.append(first)
        self._waiting.extend(r for r in _drain(self._incoming) if r is not None)
        self._waiting = [r for r in self._waiting if not r.cancelled]
        room = self.max_batch - len(state.rows)
        batch: list[Row] = []
        tokens = 0
        while self._waiting and len(batch) < room:
            nxt = self._waiting[0]
            if batch and tokens + len(nxt.prompt) > self.max_prefill_tokens:
                break
            batch.append(self._waiting.pop(0))
            tokens += len(nxt.prompt)
        if not batch:
            return
        cache, mask = self._runner.prefill(batch, self._version)
        fresh = BatchState()
        fresh.merge(batch, cache, mask)
        self._finish(fresh)
        if fresh.rows:
            assert fresh.cache is not None and fresh.mask is not None
            state.merge(fresh.rows, fresh.cache, fresh.mask)

    def _finish(self, state: BatchState) -> None:
        keep = []
        for i, row in enumerate(state.rows):
            if row.cancelled:
                continue
            if row.stop_reason is not None:
                row.on_done(row, None)
                continue
            keep.append(i)
        state.drop(keep)


def _drain(q: queue.SimpleQueue) -> list[Any]:
    items = []
    while True:
        try:
            items.append(q.get_nowait())
        except queue.Empty:
            return items


def _settle(future: asyncio.Future, row: Row, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        wrapped = EngineDeadError(f"LocalEngine failed: {type(error).__name__}: {error}")
        wrapped.__cause__ = error
        future.set_exception(wrapped)
    else:
        future.set_result(row)
