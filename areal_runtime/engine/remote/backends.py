# SPDX-License-Identifier: Apache-2.0
"""Request and response formats of the inference servers RemoteEngine talks to.

``sglang``: ``POST /generate`` with token ids in and ``meta_info.output_token_logprobs`` out.
``vllm``: ``POST /v1/completions`` with a token-id prompt, ``return_tokens_as_token_ids`` and
``logprobs=0``. Note the logprob semantics differ: SGLang reports them after temperature,
vLLM from the raw distribution by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.errors import MalformedResponseError


@dataclass
class Chunk:
    """What one server call produced."""

    tokens: list[int]
    logprobs: list[float]
    finish: str  # "stop" | "length" | "abort"


class Backend(Protocol):
    endpoint: str

    def build(
        self,
        input_ids: list[int],
        g: GenerationHyperparameters,
        budget: int,
        image_data: list[str] | None = None,
    ) -> dict: ...

    def parse(self, body: Any) -> Chunk: ...


def _sampling(g: GenerationHyperparameters) -> dict[str, Any]:
    """The sampling fields SGLang and vLLM name the same way."""
    params: dict[str, Any] = {
        "temperature": 0.0 if g.greedy else g.temperature,
        "top_p": g.top_p,
        "top_k": g.top_k if g.top_k < 2**31 else -1,
        "stop_token_ids": list(g.stop_token_ids),
        "ignore_eos": g.ignore_eos,
        "skip_special_tokens": g.skip_special_tokens,
        "frequency_penalty": g.frequency_penalty,
    }
    if g.stop:
        params["stop"] = list(g.stop)
    return params


class SGLangBackend:
    endpoint = "/generate"

    def build(
        self,
        input_ids: list[int],
        g: GenerationHyperparameters,
        budget: int,
        image_data: list[str] | None = None,
    ) -> dict:
        params = {"max_new_tokens": budget, "min_new_tokens": g.min_new_tokens, **_sampling(g)}
        body = {
            "input_ids": list(input_ids),
            "sampling_params": params,
            "return_logprob": True,
            "stream": False,
        }
        if image_data:
            body["image_data"] = list(image_data)  # base64 strings, as AReaL sends them
        return body

    def parse(self, body: Any) -> Chunk:
        try:
            meta = body["meta_info"]
            pairs = meta["output_token_logprobs"]
            finish = meta["finish_reason"]
            kind = finish.get("type") if isinstance(finish, dict) else finish
            return Chunk([int(p[1]) for p in pairs], [float(p[0]) for p in pairs], str(kind))
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise MalformedResponseError(
                f"not an SGLang /generate response ({type(exc).__name__}: {exc})"
            ) from None


class VLLMBackend:
    endpoint = "/v1/completions"

    def build(
        self,
        input_ids: list[int],
        g: GenerationHyperparameters,
        budget: int,
        image_data: list[str] | None = None,
    ) -> dict:
        if image_data:
            raise ValueError(
                "vLLM's /v1/completions with a token-id prompt takes no images, so this "
                "request's image_data would be lost; serve vision models with SGLang "
                "(RemoteEngine(..., backend='sglang'))"
            )
        return {
            "prompt": list(input_ids),
            "max_tokens": budget,
            "min_tokens": g.min_new_tokens,
            **_sampling(g),
            "logprobs": 0,
            "return_tokens_as_token_ids": True,
            "stream": False,
        }

    def parse(self, body: Any) -> Chunk:
        try:
            choice = body["choices"][0]
            logprobs = choice["logprobs"]
            tokens = [int(str(t).removeprefix("token_id:")) for t in logprobs["tokens"]]
            values = [float(x) for x in logprobs["token_logprobs"]]
            finish = choice.get("finish_reason") or "length"
            return Chunk(tokens, values, "abort" if finish == "abort" else str(finish))
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise MalformedResponseError(
                f"not a vLLM /v1/completions response ({type(exc).__name__}: {exc})"
            ) from None


BACKENDS: dict[str, type] = {"sglang": SGLangBackend, "vllm": VLLMBackend}
