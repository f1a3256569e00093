# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``agenerate`` contract, shared by every engine so they validate and stop alike."""

from __future__ import annotations

from typing import Any

from areal_runtime.api.io_struct import ModelRequest, StopReason

_SAMPLING_FIELDS = {
    "n_samples", "max_new_tokens", "min_new_tokens", "max_tokens", "greedy", "top_p", "top_k",
    "temperature", "stop_token_ids", "ignore_eos", "skip_special_tokens", "stop",
    "frequency_penalty", "lora_name", "use_beam_search",
}  # fmt: skip


def validate_request(req: ModelRequest, vocab_size: int | None = None) -> int:
    """Check ``req`` against the contract and return its token budget.

    The budget is ``min(max_tokens - len(input_ids), max_new_tokens)``; AReaL raises
    RuntimeError when it is <= 0, this raises ValueError with both numbers.
    """
    g = req.gconfig
    unknown = set(vars(g)) - _SAMPLING_FIELDS
    if unknown:
        raise ValueError(f"unknown sampling option(s) {sorted(unknown)} on gconfig")
    if g.n_samples != 1:
        raise ValueError(
            f"gconfig.n_samples={g.n_samples}: agenerate returns one completion; call it "
            "n times or use group_size, and pass gconfig.new(n_samples=1)"
        )
    if not req.input_ids:
        raise ValueError("empty prompt: ModelRequest.input_ids must hold at least one token")
    bad = [t for t in req.input_ids if not isinstance(t, int) or isinstance(t, bool)]
    if bad:
        raise ValueError(f"input_ids must be ints, got {bad[:3]!r}")
    if vocab_size is not None:
        outside = [t for t in req.input_ids if not 0 <= t < vocab_size]
        if outside:
            raise ValueError(
                f"token ids {outside[:5]} are outside the vocabulary [0, {vocab_size}); "
                "encode the prompt with this engine's tokenizer"
            )
    if g.max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {g.max_new_tokens}")
    if g.min_new_tokens < 0 or g.min_new_tokens > g.max_new_tokens:
        raise ValueError(
            f"min_new_tokens={g.min_new_tokens} must be between 0 and "
            f"max_new_tokens={g.max_new_tokens}"
        )
    if g.temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {g.temperature}")
    if not 0 < g.top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {g.top_p}")
    if g.top_k < 1 and g.top_k != -1:
        raise ValueError(f"top_k must be >= 1 (or -1 for no limit), got {g.top_k}")
    if g.use_beam_search:
        raise ValueError("use_beam_search is not supported by areal_runtime engines")
    stop_ids = g.stop_token_ids or []
    if any(not isinstance(t, int) or isinstance(t, bool) for t in stop_ids):
        raise ValueError(
            f"stop_token_ids must be ints, got {stop_ids!r}; a None usually means the tokenizer "
            "has no pad/eos id (use GenerationHyperparameters.new_with_stop_and_pad_token_ids)"
        )
    if g.stop is not None and (
        isinstance(g.stop, str) or not all(isinstance(s, str) and s for s in g.stop)
    ):
        raise ValueError(f"stop must be a list of non-empty strings, got {g.stop!r}")
    budget = min(g.max_tokens - len(req.input_ids), g.max_new_tokens)
    if budget <= 0:
        raise ValueError(
            f"no room to generate: the prompt has {len(req.input_ids)} tokens, max_tokens is "
            f"{g.max_tokens} and max_new_tokens is {g.max_new_tokens}; shorten the prompt or "
            "raise max_tokens"
        )
    return budget


def stop_ids_for(req: ModelRequest, tokenizer: Any = None) -> set[int]:
    """Ids that end generation: ``stop_token_ids``, plus eos unless ``ignore_eos``."""
    ids = set(req.gconfig.stop_token_ids or [])
    if not req.gconfig.ignore_eos and tokenizer is not None:
        eos = getattr(tokenizer, "eos_token_id", None)
        for tok in eos if isinstance(eos, list) else [eos]:
            if isinstance(tok, int):
                ids.add(tok)
    return ids


def first_stop(
    tokens: list[int], req: ModelRequest, budget: int, tokenizer: Any = None
) -> tuple[int, StopReason]:
    """How many of ``tokens`` the engine keeps, and why it stopped there.

    A stop id ends the output and is kept (as AReaL's engines do); stop ids before
    ``min_new_tokens`` are ignored. A stop string ends the output at the token that completes
    it. Otherwise the output is cut at ``budget`` with ``"length"``.
    """
    stop_ids = stop_ids_for(req, tokenizer)
    stop_strings = req.gconfig.stop or []
    min_new = req.gconfig.min_new_tokens
    for i, tok in enumerate(tokens[:budget]):
        if i + 1 > min_new and tok in stop_ids:
            return i + 1, "stop"
        if stop_strings and tokenizer is not None and i + 1 > min_new:
            text = tokenizer.decode(tokens[: i + 1], skip_special_tokens=False)
            if any(s in text for s in stop_strings):
                return i + 1, "stop"
    if len(tokens) >= budget:
        return budget, "length"
    return len(tokens), "stop"
