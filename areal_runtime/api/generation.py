# SPDX-License-Identifier: Apache-2.0
"""Generation hyperparameters with AReaL's field names, defaults and helpers.

AReaL keeps them in ``areal.api.cli_args`` with every other config; here ``cli_args``
re-exports them, so the experiment configs (which nest them) import this module, not
``cli_args``, and no two config modules import each other.

Differences from AReaL, all bug fixes: ``new_with_stop_and_pad_token_ids`` never appends ``None``
and accepts tokenizers whose eos id is a list (multi-EOS models).
"""

# help_field() returns dataclasses.field(); ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

import logging
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from areal_runtime.api.config_fields import help_field

logger = logging.getLogger("areal_runtime.cli_args")

_API_FORMAT_MAX_TOKENS_KEY = {
    "completions": "max_completion_tokens",
    "responses": "max_output_tokens",
    # openai-agents' ModelSettings calls the generation budget `max_tokens`.
    "openai-agents": "max_tokens",
}


def stop_ids_of(tokenizer: Any) -> list[int]:
    """Every id that ends a generation for ``tokenizer``: pad, then eos (one id or a list).

    Why a helper: AReaL appends ``tokenizer.pad_token_id`` blindly, so a tokenizer without a pad
    id yields ``None`` in ``stop_token_ids`` and multi-EOS models lose all but one EOS.
    """
    ids: list[int] = []
    for attr in ("pad_token_id", "eos_token_id"):
        value = getattr(tokenizer, attr, None)
        for tok in value if isinstance(value, list | tuple | set) else [value]:
            if isinstance(tok, int) and not isinstance(tok, bool) and tok not in ids:
                ids.append(tok)
    return ids


@dataclass
class GenerationHyperparameters:
    """Controls text generation for rollout; same fields and defaults as AReaL."""

    n_samples: int = help_field(1, "Completions per prompt (GRPO's group size).")
    max_new_tokens: int = help_field(16384, "Longest completion in tokens.")
    min_new_tokens: int = help_field(0, "Shortest completion in tokens (EOS suppressed before).")
    max_tokens: int = help_field(32768, "Cap on prompt + completion tokens.")
    greedy: bool = help_field(False, "Greedy decoding instead of sampling.")
    top_p: float = help_field(
        1.0, "Nucleus sampling: keep the smallest token set with this much probability."
    )
    top_k: int = help_field(int(1e8), "Keep only the k most likely tokens.")
    temperature: float = help_field(1.0, "Sampling temperature.")
    stop_token_ids: list[int] = field(
        default_factory=list,
        metadata={
            "help": "Token ids that end a completion (the tokenizer's EOS and pad are added)."
        },
    )
    ignore_eos: bool = help_field(False, "Keep generating after EOS up to max_new_tokens.")
    skip_special_tokens: bool = help_field(True, "Leave special tokens out of the decoded text.")
    stop: list[str] | None = help_field(None, "Strings that end a completion; None: none.")
    frequency_penalty: float = help_field(
        0.0, "Penalty on tokens by how often they already appeared."
    )
    lora_name: str = help_field("default_lora", "LoRA adapter to generate with (GPU servers).")
    use_beam_search: bool = help_field(False, "Beam search instead of sampling (GPU servers).")

    _OPENAI_UNSUPPORTED_ARGS: ClassVar[frozenset[str]] = frozenset(
        {
            "min_new_tokens",
            "greedy",
            "top_k",
            "stop_token_ids",
            "ignore_eos",
            "skip_special_tokens",
            "lora_name",
            "use_beam_search",
            "max_tokens",
        }
    )

    def new(self, **kwargs: Any) -> GenerationHyperparameters:
        """A deep copy with ``kwargs`` applied (lists are never shared with ``self``)."""
        try:
            # A dict copy plus list copies is a deep copy here (every other field is immutable)
            # and is far faster than asdict(), which matters at one copy per agenerate.
            fresh = GenerationHyperparameters(**{**self.__dict__, **kwargs})
        except TypeError:
            unknown = sorted(set(kwargs) - {f.name for f in fields(self)})
            raise TypeError(
                f"GenerationHyperparameters has no field(s) {unknown}; "
                f"valid fields: {[f.name for f in fields(self)]}"
            ) from None
        if "stop_token_ids" not in kwargs:
            fresh.stop_token_ids = list(self.stop_token_ids)
        if "stop" not in kwargs and self.stop is not None:
            fresh.stop = list(self.stop)
        return fresh

    def new_with_stop_and_pad_token_ids(self, tokenizer: Any) -> GenerationHyperparameters:
        """A copy whose ``stop_token_ids`` also hold the tokenizer's pad and eos ids.

        Ids that are ``None`` are skipped and a list-valued eos contributes every id.
        """
        stop = list(self.stop_token_ids)
        stop.extend(tok for tok in stop_ids_of(tokenizer) if tok not in stop)
        return self.new(stop_token_ids=stop)

    def to_openai_completions_args_dict(
        self, exclude_args: list[str] | None = None
    ) -> dict[str, Any]:
        return self.to_openai_args_dict(exclude_args=exclude_args, api_format="completions")

    def to_openai_responses_args_dict(
        self, exclude_args: list[str] | None = None
    ) -> dict[str, Any]:
        return self.to_openai_args_dict(exclude_args=exclude_args, api_format="responses")

    def to_openai_agents_model_settings_dict(
        self, exclude_args: list[str] | None = None
    ) -> dict[str, Any]:
        return self.to_openai_args_dict(exclude_args=exclude_args, api_format="openai-agents")

    def to_openai_args_dict(
        self, exclude_args: list[str] | None = None, api_format: str = "completions"
    ) -> dict[str, Any]:
        """Keyword arguments for an OpenAI SDK call; unsupported fields are dropped.

        A dropped field that holds a non-default value is logged, as AReaL does.
        """
        if api_format not in _API_FORMAT_MAX_TOKENS_KEY:
            raise ValueError(
                f"Unsupported API format: {api_format!r}; "
                f"use one of {sorted(_API_FORMAT_MAX_TOKENS_KEY)}"
            )
        mapping = {"n_samples": "n", "max_new_tokens": _API_FORMAT_MAX_TOKENS_KEY[api_format]}
        excluded = set(exclude_args or ()) | self._OPENAI_UNSUPPORTED_ARGS
        result: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in excluded:
                default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
                if value != default:
                    logger.warning(
                        "Unsupported arg for openai format: `%s` with value %r", f.name, value
                    )
                continue
            result[mapping.get(f.name, f.name)] = value
        return result
