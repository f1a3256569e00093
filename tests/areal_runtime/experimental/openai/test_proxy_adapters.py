# SPDX-License-Identifier: Apache-2.0
"""A fourth API is one adapter class plus one registry entry: routes, fields, limits, docs."""

from typing import Any

import pytest
from starlette.responses import Response

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy, ProxyLimits
from areal_runtime.experimental.openai.proxy.apis import APIS, ApiAdapter, api_for_path
from areal_runtime.experimental.openai.proxy.field_docs import render_markdown
from areal_runtime.experimental.openai.proxy.field_policy import ONE_MODEL, ignored, used
from areal_runtime.experimental.openai.proxy.generation import Generation
from areal_runtime.experimental.openai.proxy.request import (
    ChatRequest,
    base_id_of,
    chat_request_of,
    sample_id,
    session_key,
)
from areal_runtime.models.tokenizers import tiny_tokenizer


class LegacyCompletions(ApiAdapter):
    """OpenAI's legacy ``/v1/completions``, reduced to a prompt string."""

    name = "legacy"
    routes = ("/v1/completions",)
    id_prefix = "cmpl-"
    fields = (used("prompt", "the user message"), used("max_tokens"), ignored("model", ONE_MODEL))
    counted_fields = ()
    length_fields = ("max_tokens",)

    def translate(self, body: dict[str, Any], tokenizer: Any, history: Any) -> ChatRequest:
        messages = [{"role": "user", "content": body.get("prompt")}]
        return chat_request_of(
            {"messages": messages, "max_tokens": body.get("max_tokens")}, tokenizer
        )

    def answer(
        self,
        answer_id: str,
        generations: list[Generation],
        request: ChatRequest,
        prompt_len: int,
        tokenizer: Any,
        body: dict[str, Any],
    ) -> dict[str, Any]:
        return {"id": answer_id, "object": "text_completion", "text": generations[0].content}

    def stream(self, answer: dict[str, Any], request: ChatRequest) -> Response:
        raise AssertionError("the table has no 'stream' field, so no request streams")


@pytest.fixture
def legacy(monkeypatch):
    api = LegacyCompletions()
    monkeypatch.setitem(APIS, api.name, api)
    return api


@pytest.mark.asyncio
async def test_a_registered_adapter_is_served_recorded_and_limited(legacy):
    tok = tiny_tokenizer()
    engine = ScriptedEngine(["forty-two"], tokenizer=tok, cycle=True)
    limits = ProxyLimits(max_new_tokens=8)
    async with AgentProxy(engine, tok, limits=limits) as proxy, proxy.session() as s:
        client, key = s.extra_kwargs["http_client"], s.extra_kwargs["api_key"]
        headers = {"authorization": f"Bearer {key}"}
        ok = await client.post("/v1/completions", json={"prompt": "hi"}, headers=headers)
        assert ok.status_code == 200, ok.text
        assert ok.json()["text"] == "forty-two"
        assert ok.json()["id"].startswith("cmpl-")
        assert s.completion_ids == [ok.json()["id"]]

        unknown = await client.post(
            "/v1/completions", json={"prompt": "hi", "suffix": "x"}, headers=headers
        )
        assert unknown.status_code == 400
        assert "['suffix'] for /v1/completions" in unknown.json()["error"]["message"]
        assert "test_proxy_adapters.py" in unknown.json()["error"]["message"]

        too_long = await client.post(
            "/v1/completions", json={"prompt": "hi", "max_tokens": 9}, headers=headers
        )
        assert too_long.status_code == 400
        assert too_long.json()["error"]["message"] == "'max_tokens' is 9; the limit is 8"
        assert len(s.completion_ids) == 1  # refused requests record nothing


def test_the_docs_render_every_registered_adapter(legacy):
    assert "## `/v1/completions`" in render_markdown()
    assert "| `prompt` | used | never | the user message |" in render_markdown()
    assert api_for_path("/v1/completions") is legacy


def test_the_three_apis_are_registered_with_distinct_routes_and_id_prefixes():
    routes = [path for api in APIS.values() for path in api.routes]
    assert len(routes) == len(set(routes))
    assert {api.name for api in APIS.values()} == {"chat", "responses", "messages"}
    assert len({api.id_prefix for api in APIS.values()}) == 3
    assert api_for_path("/v1/messages") is APIS["messages"]
    assert api_for_path("/rl/set_reward") is None


def test_sample_ids_and_session_keys_follow_one_convention():
    assert [sample_id("chatcmpl-1", i) for i in range(3)] == [
        "chatcmpl-1",
        "chatcmpl-1/1",
        "chatcmpl-1/2",
    ]
    assert base_id_of("chatcmpl-1/2") == base_id_of("chatcmpl-1") == "chatcmpl-1"
    assert session_key({"authorization": "Bearer  sk-1 "}) == "sk-1"
    assert session_key({"authorization": "bearer sk-2", "x-api-key": "sk-3"}) == "sk-2"
    assert session_key({"x-api-key": "sk-3"}) == "sk-3"
    assert session_key({}) is None
