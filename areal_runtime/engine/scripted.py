# SPDX-License-Identifier: Apache-2.0
"""``ScriptedEngine``: a deterministic engine with no model, for testing workflows.

It replays scripted completions but honours the ``agenerate`` contract exactly like a real
engine (validation, budget, stop ids and strings, equal-length logprobs and versions), and it
records every request, so a test can assert on the prompt, the stop ids and the budget a
workflow sent.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.io_struct import ModelRequest, ModelResponse, StopReason
from areal_runtime.engine._contract import first_stop, validate_request
from areal_runtime.errors import ScriptExhaustedError


@dataclass
class ScriptedReply:
    """One scripted completion with optional per-token logprobs, versions and stop reason."""

    text: str | None = None
    tokens: list[int] | None = None
    logprobs: list[float] | None = None
    versions: list[int] | None = None
    stop_reason: StopReason | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.tokens is None):
            raise ValueError("ScriptedReply needs exactly one of text=... or tokens=...")


Completion = Union[str, Sequence[int], ScriptedReply]  # noqa: UP007
Script = Union[  # noqa: UP007
    Sequence[Completion], Mapping[Any, Completion], Callable[[ModelRequest], Completion]
]


class ScriptedEngine(InferenceEngine):
    """Replays ``script``: a list (in order), a dict (by prompt), or a callable (per request).

    Dict keys are the prompt text (decoded with ``tokenizer``, special tokens kept) or a tuple
    of prompt ids. When a completion ends without a stop id and the request has
    ``stop_token_ids``, the tokenizer's eos (if listed) or the first stop id is appended, so
    ``output_tokens_without_stop`` behaves as with a real model.
    """

    def __init__(
        self,
        script: Script,
        *,
        tokenizer: Any = None,
        logprob: float = -0.1,
        version: int = 0,
        latency_s: float = 0.0,
        cycle: bool = False,
        vocab_size: int | None = None,
    ) -> None:
        if isinstance(script, str | bytes):
            raise TypeError("script must be a list of completions, a dict or a callable, not a str")
        self.script = script
        self.tokenizer = tokenizer
        self.logprob = logprob
        self.latency_s = latency_s
        self.cycle = cycle
        self.vocab_size = vocab_size if vocab_size is not None else _vocab_size(tokenizer)
        self.requests: list[ModelRequest] = []
        self._version = version
        self._position = 0

    def get_version(self) -> int:
        return self._version

    def set_version(self, version: int) -> None:
        self._version = version

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        start = time.perf_counter()
        req = req.copy()
        budget = validate_request(req, self.vocab_size)
        self.requests.append(req)
        reply = self._reply_for(req)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        tokens = self._tokens_of(reply, req)
        version = self._version
        logprobs = _per_token(reply.logprobs, tokens, self.logprob, "logprobs")
        versions = _per_token(reply.versions, tokens, version, "versions")
        kept, stop_reason = first_stop(tokens, req, budget, self.tokenizer)
        if reply.stop_reason is not None and stop_reason != "length":
            stop_reason = reply.stop_reason
        out, logprobs, versions = tokens[:kept], logprobs[:kept], versions[:kept]
        latency = time.perf_counter() - start
        return ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=out,
            output_logprobs=[float(x) for x in logprobs],
            output_versions=[int(v) for v in versions],
            stop_reason=stop_reason,
            tokenizer=req.tokenizer if req.tokenizer is not None else self.tokenizer,
            processor=req.processor,
            input_images=list(req.image_data or []),
            latency=latency,
            ttft=latency,
        )

    def _reply_for(self, req: ModelRequest) -> ScriptedReply:
        if callable(self.script) and not isinstance(self.script, Mapping | Sequence):
            return _as_reply(self.script(req))
        if isinstance(self.script, Mapping):
            return _as_reply(self._lookup(req))
        if self._position >= len(self.script):
            if not self.cycle or not self.script:
                raise ScriptExhaustedError(
                    f"ScriptedEngine has {len(self.script)} scripted completion(s) and all were "
                    f"used; this is request {self._position + 1}. Script more completions or "
                    "pass cycle=True"
                )
            self._position = 0
        reply = self.script[self._position]
        self._position += 1
        return _as_reply(reply)

    def _lookup(self, req: ModelRequest) -> Completion:
        assert isinstance(self.script, Mapping)
        key_ids = tuple(req.input_ids)
        if key_ids in self.script:
            return self.script[key_ids]
        if self.tokenizer is not None:
            text = self.tokenizer.decode(req.input_ids, skip_special_tokens=False)
            if text in self.script:
                return self.script[text]
            for key, value in self.script.items():
                if isinstance(key, str) and text.endswith(key):
                    return value
        known = list(itertools.islice(self.script, 5))
        raise KeyError(
            f"no scripted completion for this prompt; script keys start with {known!r}. "
            "Key the dict by the prompt text (or its ending) or by the tuple of prompt ids"
        )

    def _tokens_of(self, reply: ScriptedReply, req: ModelRequest) -> list[int]:
        if reply.tokens is not None:
            tokens = [int(t) for t in reply.tokens]
        else:
            if self.tokenizer is None:
                raise ValueError(
                    "a text completion needs a tokenizer: ScriptedEngine(script, tokenizer=tok), "
                    "or script token ids instead"
                )
            tokens = list(self.tokenizer.encode(reply.text, add_special_tokens=False))
        stop_ids = list(req.gconfig.stop_token_ids or [])
        if stop_ids and not (tokens and tokens[-1] in stop_ids):
            eos = getattr(self.tokenizer, "eos_token_id", None)
            tokens.append(eos if eos in stop_ids else stop_ids[0])
        return tokens


def _per_token(values: list | None, tokens: list[int], default: Any, name: str) -> list:
    """One value per token; a list one short (the appended stop token) repeats its last value."""
    if values is None:
        return [default] * len(tokens)
    values = list(values)
    if len(values) == len(tokens) - 1:
        values.append(values[-1] if values else default)
    if len(values) != len(tokens):
        raise ValueError(
            f"ScriptedReply has {len(values)} {name} for {len(tokens)} tokens; give one per token"
        )
    return values


def _as_reply(value: Completion) -> ScriptedReply:
    if isinstance(value, ScriptedReply):
        return value
    if isinstance(value, str):
        return ScriptedReply(text=value)
    if isinstance(value, Sequence):
        return ScriptedReply(tokens=list(value))
    raise TypeError(
        f"a scripted completion must be a str, a list of token ids or a ScriptedReply, "
        f"got {type(value).__name__}"
    )


def _vocab_size(tokenizer: Any) -> int | None:
    if tokenizer is None:
        return None
    try:
        return len(tokenizer)
    except TypeError:
        return getattr(tokenizer, "vocab_size", None)
