# SPDX-License-Identifier: Apache-2.0
"""The proxy's service layer: one API request in, one recorded answer out, with no HTTP in it.

:class:`ProxyState` is the session registry (``sessions.py``) plus the generator
(``generation.py``) and the request limits: :meth:`ProxyState.answer` checks a parsed body,
generates with the engine, claims the answer for its session and keeps it on the interaction.
The HTTP edge (``server.py``) reads bodies and keys and turns the typed errors raised here
(:class:`~areal_runtime.errors.ProxyHTTPError`) into responses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.errors import InvalidRequestError, ProxyHTTPError
from areal_runtime.experimental.openai.proxy.apis import ApiAdapter
from areal_runtime.experimental.openai.proxy.generation import Generator
from areal_runtime.experimental.openai.proxy.limits import check_request_limits
from areal_runtime.experimental.openai.proxy.request import MODEL_NAME
from areal_runtime.experimental.openai.proxy.sessions import (
    DEFAULT_ADMIN_API_KEY,
    SessionData,
    SessionLimits,
    SessionRegistry,
)
from areal_runtime.experimental.openai.types import (
    ChatTemplateType,
    InteractionWithTokenLogpReward,
)

__all__ = ["ProxyState", "answer_json", "attach_answer", "requested_model"]
logger = logging.getLogger("areal_runtime.proxy")


class ProxyState(SessionRegistry):
    """The session registry, plus the generator and the request limits the API routes use."""

    def __init__(
        self,
        engine: Any,
        tokenizer: Any,
        *,
        admin_api_key: str = DEFAULT_ADMIN_API_KEY,
        chat_template_type: ChatTemplateType = "hf",
        engine_max_tokens: int | None = None,
        limits: RequestLimits | None = None,
        session_limits: SessionLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.generator = Generator(
            engine,
            tokenizer,
            chat_template_type=chat_template_type,
            engine_max_tokens=engine_max_tokens,
        )
        super().__init__(admin_api_key=admin_api_key, session_limits=session_limits, clock=clock)
        self.limits = limits or RequestLimits()

    @property
    def engine(self) -> Any:
        return self.generator.engine

    @property
    def tokenizer(self) -> Any:
        return self.generator.tokenizer

    async def answer(
        self, api: ApiAdapter, session: SessionData, body: Any
    ) -> tuple[dict[str, Any], Any]:
        """One API request: checked, generated, recorded as pending; the answer and the request."""
        request = self._parse(api, session, body)
        answer_id = api.new_id()
        try:
            prompt, generations = await self.generator.generate(
                session, api.sampling(request), answer_id
            )
        finally:
            session.last_active = self.clock()
        self.claim(session, answer_id)
        answer = api.answer(answer_id, generations, request, len(prompt), self.tokenizer, body)
        answer["model"] = requested_model(body)  # clients compare it with what they asked for
        attach_answer(session.completions[answer_id], api.name, answer)
        return answer, request

    def prompt_tokens(self, api: ApiAdapter, session: SessionData, body: Any) -> int:
        """How many tokens the engine would read for ``body``, recording nothing: what the
        APIs' token-count endpoints answer (an agent counting before it trims its history)."""
        request = self._parse(api, session, body)
        try:
            return len(self.generator.prompt(session, api.sampling(request)))
        except InvalidRequestError as exc:
            raise ProxyHTTPError(400, str(exc)) from None

    def _parse(self, api: ApiAdapter, session: SessionData, body: Any) -> Any:
        """``body`` checked against the limits and the API's fields, with its history."""
        check_request_limits(body, api, self.limits)
        previous = api.continues_from(body)
        history = self._history(session, previous) if previous is not None else None
        try:
            return api.parse(body, self.tokenizer, history)
        except InvalidRequestError as exc:
            raise ProxyHTTPError(400, str(exc)) from None

    def _history(self, session: SessionData, previous: Any) -> list[dict[str, Any]]:
        """The conversation up to and including the answer ``previous`` names."""
        if not isinstance(previous, str) or previous not in session.completions:
            if isinstance(previous, str):
                self.owned_completion(session, previous)
            raise ProxyHTTPError(
                400, f"previous_response_id {previous!r} names no response of this session"
            )
        item = session.completions[previous]
        return [*item.messages, *(dict(m) for m in item.output_message_list or [])]


def attach_answer(item: InteractionWithTokenLogpReward, api: str, answer: dict[str, Any]) -> None:
    """Keep the answer on the interaction as AReaL does: a ``ChatCompletion`` for the chat API,
    a ``Response`` for the Responses API (user code reads ``completion.choices``).

    An SDK whose models require fields this answer lacks (they change between openai releases)
    gets the object built without validation: its id, fields and JSON are still the answer's.
    """
    from pydantic import ValidationError

    if api == "chat":
        from openai.types.chat import ChatCompletion as model
    elif api == "responses":
        from openai.types.responses.response import Response as model
    else:
        return
    try:
        value = model.model_validate(answer)
    except ValidationError as exc:
        logger.debug("answer %s kept unvalidated: %s", answer.get("id"), exc)
        value = model.model_construct(**answer)
    if api == "chat":
        item.completion = value
    else:
        item.response = value


def answer_json(item: InteractionWithTokenLogpReward) -> dict[str, Any]:
    """The answer the agent received, as JSON (``GET /chat/completions/{id}``)."""
    answer = item.completion if item.completion is not None else item.response
    return {} if answer is None else answer.model_dump(mode="json", exclude_unset=True)


def requested_model(body: Any) -> str:
    """The model name the request asked for, echoed in the answer; the proxy's own if none."""
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else MODEL_NAME
