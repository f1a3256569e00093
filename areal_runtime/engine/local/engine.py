# SPDX-License-Identifier: Apache-2.0
"""``LocalEngine``: a transformers model served to concurrent ``agenerate`` callers.

A single worker thread runs the model with continuous batching (see ``batching.py``); the event
loop only enqueues requests and awaits futures that the worker resolves with
``call_soon_threadsafe``, so it is never blocked. If the worker dies, every pending and later
call fails with the cause instead of hanging.

Two things keep agent workloads cheap: a prefix cache (``prefix_cache.py``) reuses the KV of
prompt prefixes computed before, across requests, sessions and group members, and a prompt
with more new tokens than ``prefill_chunk_tokens`` is prefilled a chunk per worker turn, with a
decode step of the running batch between chunks, so one long prompt does not stall the rest.
Long contexts decode without copying the KV cache each step (``growing_cache.py``), and a model
on transformers' ``sdpa`` is switched to ``decode_attention.py``'s (the same SDPA, with grouped
query heads packed for single-query steps).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import queue
import threading
import time
from pathlib import Path
from typing import Any

import torch

from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.engine._contract import stop_ids_for, validate_request
from areal_runtime.engine.local.batching import (
    BatchRunner,
    BatchState,
    ChunkedPrefill,
    Row,
    cache_is_plain,
    row_kv,
)
from areal_runtime.engine.local.prefix_cache import PrefixCache, PrefixCacheStats, images_key
from areal_runtime.engine.local.sampling import SamplingParams
from areal_runtime.engine.response_extras import note_cached_tokens
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
        prefix_cache_bytes: int = 2 * 1024**3,
        prefix_cache_block: int = 16,
        prefill_chunk_tokens: int | None = 512,
    ) -> None:
        """``prefix_cache_bytes=0`` turns the prefix cache off; ``prefill_chunk_tokens=None``
        prefills every prompt whole (as before chunking)."""
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if prefill_chunk_tokens is not None and prefill_chunk_tokens < 1:
            raise ValueError(
                f"prefill_chunk_tokens must be >= 1 or None (no chunking), got {prefill_chunk_tokens}"
            )
        self.prefill_chunk_tokens = prefill_chunk_tokens
        self._prefix = PrefixCache(prefix_cache_bytes, prefix_cache_block)
        self._chunk: ChunkedPrefill | None = None
        self.model = model.eval()
        self.tokenizer = tokenizer
        # A model may declare how long it ever answers (generation_config.max_new_tokens): the
        # embedded one does, so a client asking for 128k tokens gets a length stop, not a
        # runaway decode when the tiny model never writes its EOS.
        generation = getattr(model, "generation_config", None)
        self.model_max_new_tokens: int | None = getattr(generation, "max_new_tokens", None)
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
        self._batch: BatchState | None = None  # the worker thread's running batch

    @classmethod
    def from_pretrained(
        cls, path: str | Path, *, dtype: str = "float32", **kwargs: Any
    ) -> LocalEngine:
        """Load a local HF model directory (and its tokenizer, if it has one).

        ``dtype="bfloat16"`` halves the weights' memory and, on a CPU with AVX-512 BF16, made
        32-row decode steps of a Qwen3-0.6B-shaped model 1.8x faster (BENCHMARKS.md); its
        logprobs then differ from an fp32 trainer's by bf16 rounding, so float32 is the default.
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {dtype!r}")
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(
                f"{path} is not a Hugging Face model directory (no config.json); save one with "
                "model.save_pretrained(path) or areal_runtime.models.default_model.save_default_model"
            )
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype)
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
        if version != self._version:
            self._prefix.new_weights()  # a new version means new weights: drop cached KV
        self._version = version

    @property
    def running(self) -> int:
        """Requests holding a slot of the batch now: decoding, or in a chunked prefill.

        Read from any thread (a snapshot). A cancelled request leaves its slot at the next
        decode step, so a caller that went away stops costing the engine at once.
        """
        batch = self._batch
        return (len(batch.rows) if batch is not None else 0) + (self._chunk is not None)

    def prefix_cache_stats(self) -> PrefixCacheStats:
        """A snapshot of the prefix cache's counters (hit rate, cached tokens, flushes)."""
        return dataclasses.replace(self._prefix.stats)

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
        budget = validate_request(
            req,
            self.vocab_size,
            positions=self.max_positions,
            model_max_new_tokens=self.model_max_new_tokens,
        )
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
            cache_key=images_key(req.image_data),  # equal tokens, other images: other KV
        )
        self._incoming.put(row)
        try:
            await future
        except asyncio.CancelledError:
            row.cancelled = True
            raise
        latency = time.perf_counter() - row.submitted
        response = ModelResponse(
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
        note_cached_tokens(response, row.cached_tokens)
        return response

    async def serve_sglang(self, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> Any:
        """Serve this engine over SGLang's ``/generate``: a ``ServedApp`` with ``.address``."""
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
        if self.num_threads:
            torch.set_num_threads(self.num_threads)
        state = self._batch = BatchState(self.max_batch)
        try:
            while not self._closed:
                self._apply_weight_updates()
                self._admit(state, block=not state.rows and self._chunk is None)
                if self._closed:
                    break
                if self._chunk is not None:
                    self._advance_chunk(state)
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
        if self._chunk is not None:
            pending.append(self._chunk.row)
            self._chunk = None
        for row in pending:
            self._prefix.release(row.cache_hit)
            row.on_done(row, error)

    def _apply_weight_updates(self) -> None:
        while True:
            try:
                state_dict, done = self._weight_updates.get_nowait()
            except queue.Empty:
                return
            try:
                self._prefix.new_weights()  # before loading: even a partial load makes the KV stale
                self.model.load_state_dict(state_dict, strict=False)
                self._version += 1
                done.set_result(self._version)
            except Exception as exc:
                done.set_exception(exc)

    def _admit(self, state: BatchState, block: bool) -> None:
        """Prefill waiting requests that fit, then merge them into the running batch.

        A request with more new tokens than ``prefill_chunk_tokens`` starts a chunked prefill
        instead (one at a time); a request sharing uncached blocks with one already picked
        waits a turn, so it reuses that one's KV instead of computing it again (a group's
        samples of one prompt).
        """
        if block and not self._waiting:
            first = self._incoming.get()
            if first is not None:
                self._waiting.append(first)
        self._waiting.extend(r for r in _drain(self._incoming) if r is not None)
        room = self.max_batch - len(state.rows) - (self._chunk is not None)
        batch: list[Row] = []
        later: list[Row] = []
        tokens = 0
        for row in self._waiting:
            if row.cancelled:
                continue
            if room <= 0:
                later.append(row)
                continue
            reused = self._prefix.reusable(row.prompt, row.cache_key)
            new = len(row.prompt) - reused
            if self.prefill_chunk_tokens is not None and new > self.prefill_chunk_tokens:
                if self._chunk is None:
                    self._start_chunk(row)
                    room -= 1
                else:
                    later.append(row)
                continue
            if batch and (
                tokens + new > self.max_prefill_tokens
                or self._prefix.shares_new_blocks(
                    row.prompt, reused, (o.prompt for o in batch if o.cache_key == row.cache_key)
                )
            ):
                later.append(row)
                continue
            batch.append(row)
            tokens += new
            room -= 1
        self._waiting = later
        if batch:
            self._prefill(state, batch)

    def _prefill(self, state: BatchState, batch: list[Row]) -> None:
        prefixes = [self._match(row) for row in batch]
        cache, mask = self._runner.prefill(batch, self._version, prefixes)
        if self._prefix.enabled:
            if cache_is_plain(cache, mask.shape[1]):
                for i, row in enumerate(batch):
                    self._store(row, row.prompt, cache, i, mask[i])
            else:  # a sliding-window or offloaded cache: keep computing everything
                self._prefix.disable()
        fresh = BatchState()
        fresh.merge(batch, cache, mask)
        self._join(state, fresh)

    def _start_chunk(self, row: Row) -> None:
        from transformers import DynamicCache

        kv = self._match(row)
        layers = None
        if kv is not None:
            layers = [(kv[i, 0].unsqueeze(0), kv[i, 1].unsqueeze(0)) for i in range(kv.shape[0])]
        cache = DynamicCache(ddp_cache_data=layers) if layers else DynamicCache()
        self._chunk = ChunkedPrefill(row, cache, row.cached_tokens)

    def _advance_chunk(self, state: BatchState) -> None:
        """Prefill the next chunk of the long prompt; once done, it joins the batch.

        Only while someone else waits (rows decoding, requests queued): with nobody to let
        through, the rest goes in one forward, which is still a little faster than chunks
        (26k tokens: 16.6 s whole, 17.9 s in chunks of 512 through ``chunk_sdpa``, 25.6 s with
        transformers' masked SDPA; BENCHMARKS.md, "Long prompts in chunks").
        """
        job = self._chunk
        assert job is not None and self.prefill_chunk_tokens is not None
        if job.row.cancelled:
            self._prefix.release(job.row.cache_hit)
            self._chunk = None
            return
        others = bool(state.rows or self._waiting) or not self._incoming.empty()
        size = self.prefill_chunk_tokens if others else len(job.row.prompt) - job.done
        if not self._runner.prefill_chunk(job, self._version, size):
            return
        self._chunk = None
        length = len(job.row.prompt)
        if self._prefix.enabled and cache_is_plain(job.cache, length):
            self._store(job.row, job.row.prompt, job.cache, 0, torch.ones(length))
        fresh = BatchState()
        fresh.merge([job.row], job.cache, torch.ones(1, length, dtype=torch.long))
        self._join(state, fresh)

    def _join(self, state: BatchState, fresh: BatchState) -> None:
        self._finish(fresh)
        if fresh.rows:
            assert fresh.cache is not None and fresh.mask is not None
            state.merge(fresh.rows, fresh.cache, fresh.mask)

    def _match(self, row: Row) -> torch.Tensor | None:
        """Take the row's hit in the prefix cache (held until the row ends); its KV."""
        row.cache_hit = self._prefix.match(row.prompt, row.cache_key)
        row.cached_tokens = row.cache_hit.tokens
        return row.cache_hit.take_kv()

    def _store(self, row: Row, tokens: list[int], cache: Any, index: int, mask: Any) -> None:
        """Offer ``tokens``' KV to the prefix cache; ``mask`` (the row's attention mask in the
        batch ``cache``) says which columns hold it. The cache reads only what it stores."""

        def read(begin: int, end: int) -> torch.Tensor | None:
            columns = mask.nonzero().squeeze(1)
            if len(columns) != len(tokens):
                return None
            return row_kv(cache, index, columns[begin:end])

        self._prefix.insert(tokens, read, hit=row.cache_hit)

    def _finish(self, state: BatchState) -> None:
        keep = []
        for i, row in enumerate(state.rows):
            if row.cancelled:
                self._prefix.release(row.cache_hit)
                continue
            if row.stop_reason is not None:
                self._store_completion(state, i, row)
                self._prefix.release(row.cache_hit)
                row.on_done(row, None)
                continue
            keep.append(i)
        state.drop(keep)

    def _store_completion(self, state: BatchState, index: int, row: Row) -> None:
        """Cache prompt + output (the next turn of a chat re-sends both); the last output
        token has no KV yet."""
        if self._prefix.enabled and len(row.tokens) >= 2:
            assert state.mask is not None
            self._store(row, row.prompt + row.tokens[:-1], state.cache, index, state.mask[index])


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
