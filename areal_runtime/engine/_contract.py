# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``agenerate`` contract, shared by every engine so they validate and stop alike."""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import TYPE_CHECKING, Any

from areal_runtime.api.io_struct import ModelRequest, StopReason

if TYPE_CHECKING:
    from areal_runtime.api.cli_args import GenerationHyperparameters

_SAMPLING_FIELDS = {
    "n_samples", "max_new_tokens", "min_new_tokens", "max_tokens", "greedy", "top_p", "top_k",
    "temperature", "stop_token_ids", "ignore_eos", "skip_special_tokens", "stop",
    "frequency_penalty", "lora_name", "use_beam_search",
}  # fmt: skip


# gconfig.max_tokens where no total cap applies (the proxy, unless a request sets
# max_total_tokens): GenerationHyperparameters' default of 32768 would refuse a long prompt the
# model can hold.
NO_TOTAL_CAP = 2**62


def validate_request(
    req: ModelRequest,
    vocab_size: int | None = None,
    *,
    positions: int | None = None,
    model_max_new_tokens: int | None = None,
) -> int:
    """Check ``req`` against the contract and return its :func:`token_budget`.

    ``positions`` and ``model_max_new_tokens`` are the engine's own caps (a local model's
    position embeddings and its ``generation_config.max_new_tokens``).
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
    return token_budget(
        len(req.input_ids), g, positions=positions, model_max_new_tokens=model_max_new_tokens
    )


def token_budget(
    prompt_len: int,
    gconfig: GenerationHyperparameters,
    *,
    engine_max_tokens: int | None = None,
    positions: int | None = None,
    model_max_new_tokens: int | None = None,
) -> int:
    """The most tokens one completion after ``prompt_len`` prompt tokens may have.

    The one place a new-token budget is decided: ``gconfig.max_new_tokens`` (and a model's
    own ``model_max_new_tokens``), cut so prompt + completion fit every total cap:
    ``gconfig.max_tokens`` (AReaL's rule; the proxy's ``max_total_tokens``), the deployment's
    ``engine_max_tokens`` and the model's ``positions``. AReaL raises RuntimeError when
    nothing is left; this raises ValueError naming the prompt length and the cap that binds.
    """
    caps: list[tuple[int, str, str]] = [
        (gconfig.max_new_tokens, f"max_new_tokens is {gconfig.max_new_tokens}", "raise it"),
        (
            gconfig.max_tokens - prompt_len,
            f"max_tokens is {gconfig.max_tokens} and max_new_tokens is {gconfig.max_new_tokens}",
            "shorten the prompt or raise max_tokens",
        ),
    ]
    if model_max_new_tokens is not None and model_max_new_tokens > 0:
        caps.append((model_max_new_tokens, "", ""))  # positive: never the cap that leaves none
    if engine_max_tokens is not None:
        caps.append(
            (
                engine_max_tokens - prompt_len,
                f"engine_max_tokens is {engine_max_tokens}",
                "shorten the prompt or raise engine_max_tokens",
            )
        )
    if positions is not None:
        caps.append(
            (
                positions - prompt_len,
                f"the model supports {positions} positions",
                "shorten the prompt",
            )
        )
    budget, why, remedy = min(caps, key=lambda cap: cap[0])
    if budget <= 0:
        raise ValueError(
            f"no room to generate: the prompt has {prompt_len} tokens, {why}; {remedy}"
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


def stop_reason(
    tokens: list[int],
    budget: int,
    *,
    stop_ids: Container[int],
    stop_strings: Sequence[str] = (),
    min_new_tokens: int = 0,
    decode: Callable[[list[int]], str] | None = None,
) -> StopReason | None:
    """Whether generation ends after the last of ``tokens``, and why; None to go on.

    The one stop rule: a stop id ends the output and is kept (as AReaL's engines do), a stop
    string ends it at the token that completes it (``decode`` renders the tokens); neither
    counts before ``min_new_tokens``. Otherwise ``budget`` tokens end it with ``"length"``.
    The local batcher asks after every token; :func:`first_stop` walks a finished script.
    """
    if len(tokens) > min_new_tokens:
        if tokens[-1] in stop_ids:
            return "stop"
        if stop_strings and decode is not None:
            text = decode(tokens)
            if any(s in text for s in stop_strings):
                return "stop"
    if len(tokens) >= budget:
        return "length"
    return None


def first_stop(
    tokens: list[int], req: ModelRequest, budget: int, tokenizer: Any = None
) -> tuple[int, StopReason]:
    """How many of ``tokens`` the engine keeps, and why it stopped there (:func:`stop_reason`);
    tokens that run out before any stop end with ``"stop"`` (the script ended)."""
    stop_ids = stop_ids_for(req, tokenizer)

    def decode(ids: list[int]) -> str:
        return tokenizer.decode(ids, skip_special_tokens=False)

    for i in range(1, min(len(tokens), budget) + 1):
        reason = stop_reason(
            tokens[:i],
            budget,
            stop_ids=stop_ids,
            stop_strings=req.gconfig.stop or (),
            min_new_tokens=req.gconfig.min_new_tokens,
            decode=decode if tokenizer is not None else None,
        )
        if reason is not None:
            return i, reason
    return len(tokens), "stop"
