# SPDX-License-Identifier: Apache-2.0
"""``ArealOpenAI``: AReaL's per-episode OpenAI client, answering from the rollout engine.

An agent written against ``openai.AsyncOpenAI`` gets this client in ``arun_episode``
(``ArealOpenAI(engine=engine, tokenizer=tokenizer)``); every ``chat.completions.create`` is a
real SDK call that lands, in-process, on the same chat handler the proxy uses (an ASGI
transport: no port, no socket), so requests, tool calls, ``n > 1``, logprobs and errors behave
exactly as they do through ``AgentProxy``. The workflow then rewards the recorded completions
and exports them for training, as in AReaL. ``responses.create`` lands on the proxy's Responses
API the same way.
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI
from openai.resources.chat.completions import AsyncCompletions

from areal_runtime.experimental.openai.cache import ExportStyle, InteractionCache
from areal_runtime.experimental.openai.proxy.agent_proxy import reward_value
from areal_runtime.experimental.openai.proxy.generation import (
    concat_prompt_token_ids_with_parent,
)
from areal_runtime.experimental.openai.proxy.request import MODEL_NAME
from areal_runtime.experimental.openai.proxy.server import ProxyState, create_proxy_app
from areal_runtime.experimental.openai.proxy.sessions import SessionData
from areal_runtime.experimental.openai.types import (
    ChatTemplateType,
    InteractionWithTokenLogpReward,
)
from areal_runtime.workflow_context import sdk_httpx

_BASE_URL = "http://areal-openai.invalid/v1"

# AReaL's name at AReaL's path; the proxy's generator builds concat prompts with it.
__all__ = ["ArealOpenAI", "concat_prompt_token_ids_with_parent"]


class _EngineCompletions(AsyncCompletions):
    """``create`` without ``model=``, as AReaL's client allows: there is one model, the engine's.

    ``areal_cache`` (AReaL's worker passes a session's cache) records the completion there
    instead of in the client's own cache, with the cache's earlier completions as parents.
    """

    def __init__(self, client: ArealOpenAI) -> None:
        super().__init__(client)
        self._areal = client

    async def create(  # type: ignore[override]
        self,
        *,
        messages: Any,
        model: str = MODEL_NAME,
        areal_cache: InteractionCache | None = None,
        **kwargs: Any,
    ) -> Any:
        if areal_cache is not None:
            key = self._areal._session_for_cache(areal_cache).api_key
            headers = {
                **(kwargs.pop("extra_headers", None) or {}),
                "Authorization": f"Bearer {key}",
            }
            kwargs["extra_headers"] = headers
        return await super().create(messages=messages, model=model, **kwargs)


class ArealOpenAI(AsyncOpenAI):
    """``AsyncOpenAI`` whose chat completions run on ``engine`` and are recorded for training.

    Build one per episode (it is cheap: no connection pool, no socket). ``tool_call_parser``
    and ``reasoning_parser`` are accepted for AReaL compatibility; tool calls are parsed from
    Qwen-style ``<tool_call>`` blocks.
    """

    def __init__(
        self,
        engine: Any,
        tokenizer: Any,
        tool_call_parser: str = "qwen",
        reasoning_parser: str = "qwen3",
        engine_max_tokens: int | None = None,
        chat_template_type: ChatTemplateType = "hf",
        lora_name: str = "",
        **kwargs: Any,
    ) -> None:
        # Accepted for AReaL's signature; the runtime's engines serve one model without LoRA.
        self.lora_name = lora_name
        state = ProxyState(
            engine,
            tokenizer,
            chat_template_type=chat_template_type,
            engine_max_tokens=engine_max_tokens,
        )
        self._session = state.start_session()
        httpx = sdk_httpx()  # the httpx major the installed openai SDK is built on
        transport = httpx.ASGITransport(app=create_proxy_app(state))
        kwargs.setdefault("base_url", _BASE_URL)
        kwargs.setdefault("api_key", self._session.api_key)
        kwargs.setdefault("http_client", httpx.AsyncClient(transport=transport))
        kwargs.setdefault("max_retries", 0)  # an engine error is not a flaky network
        super().__init__(**kwargs)
        self.chat.completions = _EngineCompletions(self)  # type: ignore[misc]
        self.engine = engine
        self.tokenizer = tokenizer
        self.tool_call_parser = tool_call_parser
        self.reasoning_parser = reasoning_parser
        self._cache = self._session.completions
        self._state = state
        self._cache_sessions: dict[int, SessionData] = {}

    def _session_for_cache(self, cache: InteractionCache) -> SessionData:
        """A session of the client's proxy whose completions are ``cache``, made on first use;
        :meth:`release_cache` forgets it once the cache's session is over."""
        session = self._cache_sessions.get(id(cache))
        if session is not None and session.completions is cache:
            return session
        session = self._state.start_session()
        session.managed = True  # the cache's owner ends it (release_cache), not the sweep
        session.completions = cache
        self._cache_sessions[id(cache)] = session
        return session

    def release_cache(self, cache: InteractionCache) -> None:
        """Forget the session made for ``cache`` (its owner exported or dropped it)."""
        session = self._cache_sessions.get(id(cache))
        if session is not None and session.completions is cache:
            del self._cache_sessions[id(cache)]
            self._state.remove_session(session)

    def get_interaction(self, id: str) -> InteractionWithTokenLogpReward | None:
        """The recorded completion ``id`` with its reward, or None."""
        return self._cache.get(id)

    def set_reward(self, id: str, reward: float) -> None:
        """Reward the completion ``id`` (as returned by ``chat.completions.create``)."""
        if id not in self._cache:
            raise KeyError(
                f"no completion {id!r} was made with this client; "
                f"known ids: {[i for i in self._cache if '/' not in i][:5]}"
            )
        self._cache.set_reward(id, reward_value(reward, "reward"))

    def set_last_reward(self, reward: float) -> None:
        """Reward the most recent completion."""
        self._cache.set_last_reward(reward_value(reward, "reward"))

    def apply_reward_discount(self, turn_discount: float = 1.0) -> None:
        """Give each completion its discounted return-to-go, from the last one backwards."""
        self._cache.apply_reward_discount(turn_discount)

    def export_interactions(
        self, style: ExportStyle, reward_discount: float | None = None
    ) -> dict[str, InteractionWithTokenLogpReward]:
        """``"individual"``: every completion; ``"concat"``: the leaves of the conversation tree.

        ``reward_discount`` applies the turn discount first (once), as AReaL's client does.
        """
        return self._cache.export_interactions(style, reward_discount=reward_discount)
