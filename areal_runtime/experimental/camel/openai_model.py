# SPDX-License-Identifier: Apache-2.0
"""AReaL's CAMEL-AI backend (``areal.experimental.camel.openai_model``): a CAMEL ``ChatAgent``
whose model is the proxy, so its completions are recorded as trajectories.

``AReaLOpenAICompatibleModel(model_type, openai_client, tokenizer, ...)`` sends CAMEL's
requests through the given client (an ``ArealOpenAI`` in AReaL's example, or an
``openai.AsyncOpenAI`` pointed at the proxy) with ``model_config_dict`` as the request's
arguments; async only (``ChatAgent.astep``), as in AReaL. ``AReaLTokenCounter`` counts with the
engine's tokenizer. Needs ``camel-ai`` (``scripts/camel_env.sh`` builds ``.venv-camel``: its
release pins a pydantic older than the main environment's).

One difference from AReaL: without ``token_counter``, the backend counts with
``AReaLTokenCounter`` on the given tokenizer instead of CAMEL's ``OpenAITokenCounter``, whose
tiktoken encoding is downloaded on first use (no network on a laptop, and the wrong tokenizer
for the model being trained anyway).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

try:
    from camel.models.base_model import BaseModelBackend
    from camel.utils import BaseTokenCounter
except ModuleNotFoundError as exc:
    raise ImportError(
        f"areal_runtime.experimental.camel needs camel-ai (missing module {exc.name!r}); its "
        "release pins pydantic==2.12.0, so install it in its own environment: "
        "bash scripts/camel_env.sh (creates .venv-camel)"
    ) from exc

if TYPE_CHECKING:
    from camel.messages import OpenAIMessage
    from camel.types import ModelType
    from pydantic import BaseModel

__all__ = ["AReaLOpenAICompatibleModel", "AReaLTokenCounter"]

REPLY_PRIMER_TOKENS = 3  # the tokens that open the assistant's reply in a chat template
DEFAULT_TOKENS_PER_MESSAGE = 4  # role markers and separators of one ChatML message


class AReaLTokenCounter(BaseTokenCounter):
    """CAMEL's token counter on a Hugging Face tokenizer: each message's values encoded, plus
    ``tokens_per_message`` for its framing and a fixed primer for the reply."""

    def __init__(self, tokenizer: Any, tokens_per_message: int) -> None:
        self.tokenizer = tokenizer
        self.tokens_per_message = tokens_per_message

    def count_tokens_from_messages(self, messages: list[OpenAIMessage]) -> int:
        total = REPLY_PRIMER_TOKENS
        for message in messages:
            total += self.tokens_per_message
            for value in message.values():
                total += sum(len(self.tokenizer.encode(text)) for text in _texts(value))
        return total

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids)


def _texts(value: Any) -> list[str]:
    """The text of a message field; a content list may hold only text parts (as in AReaL)."""
    if not isinstance(value, list):
        return [str(value)]
    texts = []
    for part in value:
        if part.get("type") != "text":
            raise ValueError(
                f"AReaLTokenCounter counts text parts only, got a {part.get('type')!r} part"
            )
        texts.append(str(part["text"]))
    return texts


class AReaLOpenAICompatibleModel(BaseModelBackend):
    """A CAMEL model backend that calls ``openai_client.chat.completions.create``.

    Arguments are AReaL's: ``model_config_dict`` is sent with every request (``max_tokens``,
    ``temperature``...), ``api_key`` / ``url`` default to ``OPENAI_COMPATIBILITY_API_KEY`` /
    ``OPENAI_COMPATIBILITY_API_BASE_URL``, ``timeout`` to ``MODEL_TIMEOUT`` or 180 s.
    """

    def __init__(
        self,
        model_type: ModelType | str,
        openai_client: Any,
        tokenizer: Any,
        model_config_dict: dict[str, Any] | None = None,
        api_key: str | None = None,
        url: str | None = None,
        token_counter: BaseTokenCounter | None = None,
        timeout: float | None = None,
        max_retries: int = 3,
        **kwargs: Any,
    ) -> None:
        api_key = api_key or os.environ.get("OPENAI_COMPATIBILITY_API_KEY")
        url = url or os.environ.get("OPENAI_COMPATIBILITY_API_BASE_URL")
        if timeout is None:
            timeout = float(os.environ.get("MODEL_TIMEOUT", 180))
        super().__init__(
            model_type, model_config_dict, api_key, url, token_counter, timeout, max_retries
        )
        self.tokenizer = tokenizer
        self._client = openai_client

    def _run(
        self,
        messages: list[OpenAIMessage],
        response_format: type[BaseModel] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Any:
        """Synchronous calls are not supported (as in AReaL): use ``ChatAgent.astep``."""
        raise NotImplementedError(
            "AReaLOpenAICompatibleModel is async only: call `await agent.astep(...)`, not step()"
        )

    async def _arun(
        self,
        messages: list[OpenAIMessage],
        response_format: type[BaseModel] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Any:
        """One chat completion with ``model_config_dict`` (and the agent's tools, if any)."""
        request = self.model_config_dict.copy()
        # openai.AsyncOpenAI requires `model` (ArealOpenAI does not): name the model type.
        request.setdefault("model", str(self.model_type))
        if tools:
            request["tools"] = tools
        return await self._client.chat.completions.create(messages=messages, **request)

    @property
    def token_counter(self) -> BaseTokenCounter:
        """The given counter, else one on the engine's tokenizer (no tiktoken download)."""
        if not self._token_counter:
            self._token_counter = AReaLTokenCounter(self.tokenizer, DEFAULT_TOKENS_PER_MESSAGE)
        return self._token_counter

    @property
    def stream(self) -> bool:
        """Always False: the proxy's completions are recorded whole."""
        return False
