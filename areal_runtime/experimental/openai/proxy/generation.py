# SPDX-License-Identifier: Apache-2.0
"""Generation for every API: a chat request in, the engine's samples out, recorded as pending.

:class:`Generator` renders the prompt, runs the ``n`` engine calls under the session's episode
and records each sample in the session's cache as pending until the app knows the agent got it
(``delivery.py``). Each API adapter formats the same :class:`Generation` (visible text, tool
calls, why it stopped) its own way; the recorded tokens are the engine's, whatever the format.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from areal_runtime import workflow_context
from areal_runtime.api.io_struct import ModelRequest, ModelResponse
from areal_runtime.engine._contract import token_budget
from areal_runtime.errors import InvalidRequestError, ProxyHTTPError
from areal_runtime.experimental.openai.proxy.request import ChatRequest, sample_id
from areal_runtime.experimental.openai.proxy.tool_calls import parse_tool_calls
from areal_runtime.experimental.openai.types import (
    ChatTemplateType,
    InteractionWithTokenLogpReward,
)

if TYPE_CHECKING:
    from areal_runtime.experimental.openai.proxy.sessions import SessionData

Finish = Literal["stop", "length", "tool_calls"]


@dataclass
class Generation:
    """An engine response decoded for an API answer."""

    interaction_id: str
    response: ModelResponse
    tokens: list[int]  # visible output tokens (trailing stop tokens removed)
    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    malformed_tool_calls: list[str] = field(default_factory=list)
    stop_sequence: str | None = None

    @property
    def finish(self) -> Finish:
        if self.tool_calls:
            return "tool_calls"
        return "length" if self.response.stop_reason == "length" else "stop"

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message in chat format: what later requests repeat as history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


def visible_tokens(resp: ModelResponse) -> list[int]:
    """Output tokens without the trailing stop run; an EOS-only output is an empty answer.

    ``output_tokens_without_stop`` raises on an EOS-only output (AReaL's semantics, kept); the
    proxy must still answer, where AReaL's returns HTTP 500 for a model that stops at once.
    """
    if not resp.output_tokens:
        return []
    try:
        return resp.output_tokens_without_stop
    except ValueError:
        if resp.end_with_stop:
            return []
        raise


def generation_of(
    interaction_id: str,
    resp: ModelResponse,
    tokenizer: Any,
    *,
    parse_tools: bool,
    stop: list[str] | None = None,
) -> Generation:
    tokens = visible_tokens(resp)
    # Stop tokens are already stripped; keep the rest so `<tool_call>` tags survive decoding.
    text = tokenizer.decode(tokens, skip_special_tokens=False)
    stop_sequence = next((s for s in stop or [] if text.endswith(s) or s in text), None)
    if not parse_tools:
        return Generation(interaction_id, resp, tokens, text, stop_sequence=stop_sequence)
    reply = parse_tool_calls(text)
    content = reply.content
    if content is None and not reply.calls:
        content = ""  # the model stopped at once: an empty answer, not a missing one
    return Generation(
        interaction_id,
        resp,
        tokens,
        content,
        reply.calls,
        reply.malformed,
        stop_sequence=stop_sequence,
    )


class Generator:
    """The engine and tokenizer behind the proxy, and how a request becomes recorded samples."""

    def __init__(
        self,
        engine: Any,
        tokenizer: Any,
        *,
        chat_template_type: ChatTemplateType = "hf",
        engine_max_tokens: int | None = None,
    ) -> None:
        if tokenizer is None:
            raise ValueError("the proxy needs a tokenizer with a chat template")
        self.engine = engine
        self.tokenizer = tokenizer
        self.chat_template_type = chat_template_type
        self.engine_max_tokens = engine_max_tokens

    async def generate(
        self, session: SessionData, req: ChatRequest, base_id: str
    ) -> tuple[list[int], list[Generation]]:
        """Generate ``req.n`` samples and record each in the session as pending delivery."""
        if session.is_completed:
            raise ProxyHTTPError(400, f"session {session.session_id} has ended")
        try:
            prompt = self.prompt(session, req)
        except InvalidRequestError as exc:
            raise ProxyHTTPError(400, str(exc)) from None
        try:
            # The engine recomputes the same budget from this gconfig (its max_tokens is the
            # request's total cap); writing it here lets the answer report the length used.
            req.gconfig.max_new_tokens = token_budget(
                len(prompt), req.gconfig, engine_max_tokens=self.engine_max_tokens
            )
        except ValueError as exc:
            raise ProxyHTTPError(400, str(exc)) from None
        token = _enter_episode(session)
        session.in_flight += 1
        try:
            responses = await asyncio.gather(
                *(
                    self.engine.agenerate(
                        ModelRequest(
                            input_ids=prompt,
                            gconfig=req.gconfig,
                            tokenizer=self.tokenizer,
                            image_data=list(req.images),
                        )
                    )
                    for _ in range(req.n)
                )
            )
        except ValueError as exc:  # the engine refused the request (e.g. the prompt is too long)
            raise ProxyHTTPError(400, f"the engine refused the request: {exc}") from None
        finally:
            session.in_flight -= 1
            if token is not None:
                workflow_context.reset(token)
        generations = [
            generation_of(
                sample_id(base_id, index),
                resp,
                self.tokenizer,
                parse_tools=req.tools is not None,
                stop=req.stop,
            )
            for index, resp in enumerate(responses)
        ]
        self._record(session, req, generations)
        return prompt, generations

    def _record(
        self, session: SessionData, req: ChatRequest, generations: list[Generation]
    ) -> None:
        for g in generations:
            session.completions.add(
                InteractionWithTokenLogpReward(
                    messages=req.messages,
                    model_response=g.response,
                    output_message_list=[g.message],
                    chat_template_type=self.chat_template_type,
                    _interaction_id=g.interaction_id,
                    session_id=session.session_id,
                ),
                delivered=False,
            )
            session.warnings += [
                f"{g.interaction_id}: a tool call could not be parsed and was left in the "
                f"reply text: {problem}"
                for problem in g.malformed_tool_calls
            ]

    def prompt(self, session: SessionData, req: ChatRequest) -> list[int]:
        """The prompt tokens: rendered whole, or (``concat``) the parent's tokens plus the rest."""
        cache = session.completions
        parent = cache.find_parent(req.messages) if self.chat_template_type == "concat" else None
        if parent is None or parent.model_response is None:
            return render_prompt(self.tokenizer, req)
        try:
            return concat_prompt_token_ids_with_parent(
                _after(parent, req),
                parent,
                self.tokenizer,
                tools=req.tools,
                extra_body={"chat_template_kwargs": req.template_kwargs},
            )
        except RuntimeError as exc:
            raise InvalidRequestError(str(exc)) from exc


def _after(parent: InteractionWithTokenLogpReward, req: ChatRequest) -> list[dict[str, Any]]:
    """The request's messages after the parent's conversation (its messages and reply)."""
    return req.messages[len(parent.messages) + len(parent.output_message_list or []) :]


def render_prompt(tokenizer: Any, req: ChatRequest) -> list[int]:
    return render_messages(tokenizer, req.messages, req.tools, req.template_kwargs)


def render_messages(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: Any = None,
    template_kwargs: dict[str, Any] | None = None,
) -> list[int]:
    """The chat template's tokens for ``messages`` with the generation prompt."""
    try:
        return list(
            tokenizer.apply_chat_template(
                messages,
                tools=tools,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
                **(template_kwargs or {}),
            )
        )
    except Exception as exc:
        raise InvalidRequestError(
            f"the chat template could not render these messages: {exc}"
        ) from exc


def concat_prompt_token_ids_with_parent(
    message_list: list[dict[str, Any]],
    parent: InteractionWithTokenLogpReward | None,
    tokenizer: Any,
    tools: Any = None,
    extra_body: dict[str, Any] | None = None,
) -> list[int]:
    """The prompt for ``message_list`` after ``parent``'s conversation, on the parent's tokens.

    AReaL's alignment rule: the parent's prompt and visible output plus one EOS (a reply cut by
    ``length`` gets the EOS the template would have closed it with) are kept as generated; the
    whole conversation is rendered and the part after as many EOS as the parent's tokens hold
    is appended. So the new turn's tokens are the template's, and the history is never
    re-tokenized (a think block the template would drop stays as the model wrote it).
    """
    kwargs = (extra_body or {}).get("chat_template_kwargs") or {}
    if parent is None:
        return render_messages(tokenizer, message_list, tools, kwargs)
    if parent.model_response is None:
        raise ValueError(
            "Parent interaction has no model_response: its tokens are unknown, so the prompt "
            "cannot be built on them"
        )
    eos = tokenizer.eos_token_id
    resp = parent.model_response
    head = [*resp.input_tokens, *visible_tokens(resp), eos]
    history = [*(parent.messages or []), *(parent.output_message_list or [])]
    full = render_messages(tokenizer, history + list(message_list), tools, kwargs)
    wanted = head.count(eos)
    seen, cut = 0, -1
    for index, token in enumerate(full):
        if token == eos:
            seen += 1
            if seen == wanted:
                cut = index
                break
    if cut == -1 or cut + 1 >= len(full):
        raise RuntimeError(
            "cannot align the new messages with the parent's tokens: the parent's tokens hold "
            f"{wanted} EOS tokens, the rendered conversation {full.count(eos)}"
        )
    return head + full[cut + 1 :]


def _enter_episode(session: SessionData) -> Any:
    """Run the engine call under the session's episode, or None if it already is.

    The inline transport keeps the agent's context, but a socket request arrives in uvicorn's
    context, so per-episode engine wrappers (``RecordingEngine``) would see no task id.
    """
    current = workflow_context.get()
    if session.task_id is None or current.task_id == session.task_id:
        return None
    return workflow_context.set(
        workflow_context.WorkflowContext(is_eval=current.is_eval, task_id=session.task_id)
    )
