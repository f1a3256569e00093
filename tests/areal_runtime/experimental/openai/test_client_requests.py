# SPDX-License-Identifier: Apache-2.0
"""The proxy's field policy against what real clients send by default.

``client_requests/`` holds requests captured once from the real clients with
``client_requests/record.py`` (Claude Code CLI 2.1.332 ``claude -p``, the Claude Agent SDK with
an MCP server, openai-agents 0.24 with default settings, openai 3.57 and anthropic 2.14). Each
must be answered by the proxy; what the policy refuses must be refused naming the field.
"""

import json
from pathlib import Path

import httpx
import pytest

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.errors import InvalidRequestError
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.experimental.openai.proxy.apis import APIS
from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import (
    parse_messages_request,
)
from areal_runtime.experimental.openai.proxy.field_docs import render_markdown
from areal_runtime.experimental.openai.proxy.field_policy import DOC_PATH, never
from areal_runtime.models.tokenizers import tiny_tokenizer

HERE = Path(__file__).parent
ROOT = HERE.parents[3]
CAPTURED = sorted((HERE / "client_requests").glob("*/*.json"))
API_OF_PATH = {api.route: name for name, api in APIS.items()}
ANSWER = "The answer is 42."  # what the scripted engine says, found nowhere else in a reply


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_docs_are_the_rendered_table():
    assert (ROOT / DOC_PATH).read_text() == render_markdown(), (
        f"regenerate {DOC_PATH}: python -m areal_runtime.experimental.openai.proxy.field_docs"
    )


def test_every_client_was_captured():
    clients = {p.parent.name for p in CAPTURED}
    assert clients >= {"claude_code_cli", "claude_agent_sdk", "openai_agents", "openai_chat"}
    assert "anthropic" in clients


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_policy_knows_every_field_real_clients_send(path):
    record = load(path)
    check_fields(API_OF_PATH[record["path"]], record["body"])  # raises on a refusal


def check_fields(api: str, body: dict) -> None:
    APIS[api].check_fields(body)


def reply_text(path: str, answer: httpx.Response) -> str:
    """The assistant's text in a JSON answer or joined from its stream, per API."""
    if answer.headers["content-type"].startswith("text/event-stream"):
        events = [
            json.loads(line.removeprefix("data: "))
            for line in answer.text.splitlines()
            if line.startswith("data: {")
        ]
        if path == "/v1/chat/completions":
            deltas = [c["delta"] for e in events for c in e["choices"]]
            return "".join(d.get("content") or "" for d in deltas)
        if path == "/v1/responses":
            return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        return "".join(
            e["delta"]["text"]
            for e in events
            if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
        )
    body = answer.json()
    if path == "/v1/chat/completions":
        return body["choices"][0]["message"]["content"]
    if path == "/v1/responses":
        return "".join(p["text"] for item in body["output"] for p in item.get("content", []))
    return "".join(block["text"] for block in body["content"] if block["type"] == "text")


@pytest.mark.asyncio
@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
async def test_the_proxy_answers_each_captured_request(path):
    """Over the socket, as the client sent it (headers included); the scripted engine answers."""
    record = load(path)
    tok = tiny_tokenizer()
    engine = ScriptedEngine([ANSWER], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        headers = {**record["headers"], "x-api-key": s.extra_kwargs["api_key"]}
        headers["authorization"] = f"Bearer {s.extra_kwargs['api_key']}"
        async with httpx.AsyncClient(timeout=60) as client:  # noqa: ARL302 - one per test
            answer = await client.post(
                proxy.base_url + record["path"], json=record["body"], headers=headers
            )
        assert answer.status_code == 200, answer.text
        assert len(s.completion_ids) == 1
        assert reply_text(record["path"], answer) == ANSWER
        assert answer.headers["content-type"].startswith(
            "text/event-stream" if record["body"].get("stream") else "application/json"
        )


def test_claude_code_system_turn_reaches_the_prompt():
    """Claude Code puts its environment in a system turn after the user turn: it is rendered."""
    record = load(HERE / "client_requests" / "claude_code_cli" / "000.json")
    tok = tiny_tokenizer()
    req = parse_messages_request(record["body"], tok)
    assert [m["role"] for m in req.messages] == ["system", "user", "system"]
    prompt = tok.apply_chat_template(
        req.messages, tools=req.tools, add_generation_prompt=True, tokenize=False
    )
    environment = req.messages[2]["content"]
    assert "Primary working directory" in environment
    assert environment in prompt
    assert prompt.count("<|im_start|>system\n") == 2  # the first system turn is not repeated
    assert len(req.tools) >= 12


REFUSALS = [
    ("messages", "output_config", {"effort": "low", "format": {"type": "json_schema"}}),
    ("messages", "context_management", {"edits": [{"type": "clear_tool_uses_20250919"}]}),
    ("messages", "mcp_servers", [{"type": "url", "url": "http://x", "name": "x"}]),
    ("messages", "container", "container_1"),
    ("chat", "presence_penalty", 0.5),
    ("chat", "response_format", {"type": "json_object"}),
    ("chat", "logit_bias", {"5": 100}),
    ("responses", "text", {"format": {"type": "json_schema", "name": "x", "schema": {}}}),
    ("responses", "background", True),
    ("responses", "prompt", {"id": "pmpt_1"}),
]


@pytest.mark.parametrize(("api", "field", "value"), REFUSALS)
def test_what_would_falsify_the_trajectory_is_refused_naming_the_field(api, field, value):
    with pytest.raises(InvalidRequestError, match=rf"^{field} is not supported by the proxy when"):
        check_fields(api, {field: value})


ACCEPTED = [
    ("messages", "thinking", {"type": "enabled", "budget_tokens": 2048}),
    ("messages", "thinking", {"type": "disabled"}),
    ("messages", "thinking", {"type": "adaptive", "display": "omitted"}),
    ("messages", "output_config", {"effort": "high"}),
    ("messages", "context_management", {"edits": [{"type": "clear_thinking_20251015"}]}),
    ("messages", "cache_control", {"type": "ephemeral"}),
    ("messages", "betas", ["context-management-2025-06-27"]),
    ("messages", "metadata", {"user_id": "u"}),
    ("responses", "reasoning", {"effort": "high", "summary": "auto"}),
    ("responses", "include", ["reasoning.encrypted_content"]),
    ("responses", "text", {"verbosity": "low"}),
    ("chat", "reasoning_effort", "minimal"),
    ("chat", "presence_penalty", 0),
]


@pytest.mark.parametrize(("api", "field", "value"), ACCEPTED)
def test_what_cannot_change_the_sampled_tokens_is_accepted(api, field, value):
    check_fields(api, {field: value})


def test_an_unknown_field_is_refused_naming_it_and_the_table():
    with pytest.raises(
        InvalidRequestError, match=r"\['frobnicate'\] for /v1/messages.*apis/anthropic_messages.py"
    ):
        check_fields("messages", {"frobnicate": 1})


def test_each_field_has_one_rule_per_api():
    for api in APIS.values():
        names = [r.field for r in api.fields]
        assert len(names) == len(set(names)), api.name
        assert all(rule.why for rule in api.fields), api.name


def test_only_fields_the_docs_call_refused_can_be_refused():
    """Both directions: refused in the docs <=> the rule has values it refuses."""
    for api in APIS.values():
        for rule in api.fields:
            can_refuse = rule.refuses is not never
            assert (rule.handling == "refused") == can_refuse == bool(rule.refused_when), (
                api.name,
                rule.field,
            )


@pytest.mark.parametrize("value", [None, 0, "", [], {}, "x", 7, ["a"], {"type": "text"}])
def test_used_and_ignored_fields_accept_any_value(value):
    for api in APIS.values():
        for rule in api.fields:
            if rule.handling != "refused":
                assert not rule.refuses(value), (api.name, rule.field, value)


def test_every_refused_field_has_a_refusal_example():
    """Each rule the docs call refused is shown refusing something in REFUSALS or below."""
    shown = {(api, field) for api, field, _ in REFUSALS + MORE_REFUSALS}
    refused = {
        (api.name, rule.field)
        for api in APIS.values()
        for rule in api.fields
        if rule.handling == "refused"
    }
    assert refused == shown


MORE_REFUSALS = [
    ("chat", "top_logprobs", 2),
    ("chat", "modalities", ["text", "audio"]),
    ("chat", "audio", {"voice": "alloy"}),
    ("chat", "web_search_options", {}),
    ("chat", "functions", [{"name": "f"}]),
    ("chat", "function_call", "auto"),
    ("responses", "top_logprobs", 3),
    ("responses", "conversation", "conv_1"),
]


@pytest.mark.parametrize(("api", "field", "value"), MORE_REFUSALS)
def test_the_other_refused_fields_refuse_naming_the_field(api, field, value):
    with pytest.raises(InvalidRequestError, match=rf"^{field} is not supported by the proxy when"):
        check_fields(api, {field: value})


def test_a_rule_that_refuses_must_say_refused():
    from areal_runtime.experimental.openai.proxy.field_policy import FieldRule, truthy

    with pytest.raises(ValueError, match=r"'x'.*only a 'refused' rule may refuse"):
        FieldRule("x", "ignored", "why", "non-zero", truthy)
    with pytest.raises(ValueError, match=r"'y'.*needs refused_when"):
        FieldRule("y", "refused", "why")
