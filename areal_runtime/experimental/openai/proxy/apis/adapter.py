# SPDX-License-Identifier: Apache-2.0
"""What an API adapter provides: everything about one client API, in one class.

The proxy's core (sessions, generation, delivery) is API-blind: it generates the samples of a
:class:`~areal_runtime.experimental.openai.proxy.request.ChatRequest` and records them. An
adapter says which paths the API answers, which fields it accepts (its ``FIELDS`` table, rendered
into ``docs/proxy_fields.md``), which of them cost engine time (checked against ``RequestLimits``),
how its body becomes a ``ChatRequest``, how the generations become its answer and its stream,
and the shape of its error bodies. A new API is a new subclass in its own module plus one line in
``apis/__init__.py``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from functools import cached_property
from typing import Any, ClassVar

from starlette.responses import JSONResponse, Response

from areal_runtime.errors import InvalidRequestError
from areal_runtime.experimental.openai.proxy.field_policy import FieldRule, check_fields
from areal_runtime.experimental.openai.proxy.generation import Generation
from areal_runtime.experimental.openai.proxy.request import ChatRequest, new_id

# The error ``type`` both OpenAI's and Anthropic's SDKs map to their exception classes.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
}


def openai_error_body(status: int, message: str) -> dict[str, Any]:
    """OpenAI's error shape: what the OpenAI SDKs (and the proxy's own routes) answer with."""
    kind = ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": status}}


def error_response(status: int, message: str, adapter: ApiAdapter | None = None) -> JSONResponse:
    """An error body the route's SDK understands; OpenAI's shape off the API routes."""
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    body = adapter.error_body(status, message) if adapter else openai_error_body(status, message)
    return JSONResponse(body, status_code=status)


class ApiAdapter(ABC):
    """One client API. Subclasses set the class attributes and the translation methods
    (:meth:`translate`, :meth:`answer`, :meth:`stream`)."""

    name: ClassVar[str]  # short name: "chat", "responses", "messages"
    routes: ClassVar[tuple[str, ...]]  # POST paths; the first is the one the docs show
    id_prefix: ClassVar[str]  # of the answer's id ("chatcmpl-", "resp_", "msg_")
    id_hex_chars: ClassVar[int] = 29
    fields: ClassVar[tuple[FieldRule, ...]]  # every field the API accepts, and how
    # (list field, the RequestLimits attribute that caps its length)
    counted_fields: ClassVar[tuple[tuple[str, str], ...]]
    length_fields: ClassVar[
        tuple[str, ...]
    ]  # completion-length fields (RequestLimits.max_new_tokens)
    samples_field: ClassVar[str | None] = None  # "n" where the API asks for several samples

    @property
    def route(self) -> str:
        return self.routes[0]

    @cached_property
    def table_file(self) -> str:
        """Where the ``FIELDS`` table lives, for error messages that tell how to add a field."""
        path = inspect.getfile(type(self)).replace("\\", "/")
        return path[path.index("areal_runtime/") :] if "areal_runtime/" in path else path

    def new_id(self) -> str:
        return new_id(self.id_prefix, self.id_hex_chars)

    def check_fields(self, body: dict[str, Any]) -> None:
        """A 400 naming a field this API's table refuses or does not know."""
        check_fields(self.fields, self.route, self.table_file, body)

    def continues_from(self, body: Any) -> Any:
        """The id of an earlier answer the request continues from (Responses), else None."""
        return None

    def sampling(self, request: Any) -> ChatRequest:
        """The chat request inside what :meth:`parse` returned."""
        return request

    def parse(self, body: Any, tokenizer: Any, history: list[dict[str, Any]] | None = None) -> Any:
        """Validate the body once (a JSON object, every field in ``fields``) and translate it.

        An InvalidRequestError names the field at fault. ``history`` holds the conversation
        :meth:`continues_from` names, if any.
        """
        if not isinstance(body, dict):
            raise InvalidRequestError("the request body must be a JSON object")
        self.check_fields(body)
        return self.translate(body, tokenizer, history)

    @abstractmethod
    def translate(
        self, body: dict[str, Any], tokenizer: Any, history: list[dict[str, Any]] | None
    ) -> Any:
        """A body :meth:`parse` checked, as the request the generator runs (a ChatRequest, or
        one :meth:`sampling` reads it from); an InvalidRequestError names a bad value."""

    @abstractmethod
    def answer(
        self,
        answer_id: str,
        generations: list[Generation],
        request: Any,
        prompt_len: int,
        tokenizer: Any,
        body: dict[str, Any],
    ) -> dict[str, Any]:
        """The API's answer object for the generations of one request."""

    @abstractmethod
    def stream(self, answer: dict[str, Any], request: Any) -> Response:
        """The server-sent events that build ``answer``, as the API's server sends them."""

    def render(self, answer: dict[str, Any], request: Any) -> Response:
        """The answer as the client asked for it: one JSON object, or a stream."""
        if self.sampling(request).stream:
            return self.stream(answer, request)
        return JSONResponse(answer)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The API's error shape (OpenAI's unless the API says otherwise)."""
        return openai_error_body(status, message)
