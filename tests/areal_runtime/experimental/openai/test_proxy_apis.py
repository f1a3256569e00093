# SPDX-License-Identifier: Apache-2.0
"""Responses API, Anthropic Messages and streaming, driven by the real SDKs in both transports."""

import copy

import anthropic
import openai
import pytest
from agents import Agent, ModelSettings, OpenAIProvider, RunConfig, Runner, function_tool
from openai import AsyncOpenAI

from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy, AgentProxyWorkflow
from areal_runtime.models.tokenizers import tiny_tokenizer

CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
QUESTION = {"messages": [{"role": "user", "content": "What is 2+3?"}], "answer": "5"}
RESPONSES_TOOL = {
    "type": "function",
    "name": "add",
    "description": "Add two numbers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    },
}
ANTHROPIC_TOOL = {"name": "add", "input_schema": RESPONSES_TOOL["parameters"]}
TRANSPORTS = ["inline", "socket"]


@pytest.fixture
def tok():
    return tiny_tokenizer()


def openai_client(kw):
    return AsyncOpenAI(
        base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"], max_retries=0
    )


def anthropic_client(kw):
    return anthropic.AsyncAnthropic(
        base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"], max_retries=0
    )


class ResponsesToolAgent:
    """Calls the tool, answers the tool result, rewards the answer (Responses API)."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream

    async def create(self, client, **kwargs):
        if not self.stream:
            return await client.responses.create(model="default", **kwargs)
        stream = await client.responses.create(model="default", stream=True, **kwargs)
        final = None
        async for event in stream:
            if event.type == "response.completed":
                final = event.response
        return final

    async def run(self, data, **kw):
        client = openai_client(kw)
        first = await self.create(
            client,
            input=data["messages"][0]["content"],
            tools=[RESPONSES_TOOL],
            instructions="Use tools.",
        )
        call = first.output[0]
        assert call.type == "function_call" and call.name == "add"
        second = await self.create(
            client,
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "5"}],
            tools=[RESPONSES_TOOL],
        )
        return {first.id: 0.5, second.id: float(second.output_text == data["answer"])}


class AnthropicToolAgent:
    """The same episode through the Messages API with ``tool_use`` / ``tool_result``."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream

    async def create(self, client, **kwargs):
        if not self.stream:
            return await client.messages.create(model="default", max_tokens=200, **kwargs)
        async with client.messages.stream(model="default", max_tokens=200, **kwargs) as stream:
            return await stream.get_final_message()

    async def run(self, data, **kw):
        client = anthropic_client(kw)
        messages = [{"role": "user", "content": data["messages"][0]["content"]}]
        first = await self.create(
            client, system="Use tools.", messages=messages, tools=[ANTHROPIC_TOOL]
        )
        assert first.stop_reason == "tool_use"
        use = first.content[0]
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "5"}],
            },
        ]
        second = await self.create(
            client, system="Use tools.", messages=messages, tools=[ANTHROPIC_TOOL]
        )
        text = "".join(b.text for b in second.content if b.type == "text")
        return {first.id: 0.5, second.id: float(text == data["answer"])}


class ChatStreamAgent:
    def __init__(self, stream: bool) -> None:
        self.stream = stream

    async def run(self, data, **kw):
        client = openai_client(kw)
        if not self.stream:
            r = await client.chat.completions.create(model="m", messages=data["messages"])
            return float(r.choices[0].message.content == data["answer"])
        stream = await client.chat.completions.create(
            model="m",
            messages=data["messages"],
            stream=True,
            stream_options={"include_usage": True},
        )
        text, usage = "", None
        async for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
            usage = chunk.usage or usage
        assert usage is not None and usage.completion_tokens == 2
        return float(text == data["answer"])


async def episode(agent, tok, transport, script):
    engine = ScriptedEngine(script, tokenizer=tok, logprob=-0.2, version=1)
    async with AgentProxy(engine, tok, transport=transport) as proxy:
        traj = await AgentProxyWorkflow(agent, proxy).arun_episode(None, QUESTION)
    return traj, engine


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("make", "script"),
    [
        (ResponsesToolAgent, [CALL, "5"]),
        (AnthropicToolAgent, [CALL, "5"]),
        (ChatStreamAgent, ["5"]),
    ],
    ids=["responses", "messages", "chat"],
)
async def test_streamed_and_plain_episodes_train_the_same_tokens(tok, transport, make, script):
    plain, plain_engine = await episode(make(stream=False), tok, transport, script)
    streamed, streamed_engine = await episode(make(stream=True), tok, transport, script)
    assert [r.input_ids for r in plain_engine.requests] == [
        r.input_ids for r in streamed_engine.requests
    ]
    assert set(plain) == set(streamed)
    for key in plain:
        assert plain[key].tolist() == streamed[key].tolist(), key
    assert plain["rewards"].tolist()[-1] == 1.0  # the final answer was right and rewarded by id
    # the tool result is context, the tool call and the answer are trained, with the engine's
    # logprobs and version
    trained = plain["input_ids"][plain["loss_mask"].bool()].tolist()
    eos = tok.eos_token_id
    answers = [[*tok.encode(s, add_special_tokens=False), eos] for s in script]
    assert trained == [t for a in answers for t in a]
    trained_logprobs = plain["logprobs"][plain["loss_mask"].bool()].tolist()
    assert trained_logprobs == pytest.approx([-0.2] * len(trained))


@function_tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


class AgentsSDKAgent:
    """The OpenAI Agents SDK, as AReaL's MathToolAgent drives it (Responses API by default)."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream

    async def run(self, data, **kw):
        config = RunConfig(
            model_provider=OpenAIProvider(openai_client=openai_client(kw)),
            model="default",
            tracing_disabled=True,
            model_settings=ModelSettings(max_tokens=200),
        )
        agent = Agent(name="calc", instructions="Use the tools.", tools=[add])
        question = data["messages"][0]["content"]
        if self.stream:
            result = Runner.run_streamed(agent, input=question, run_config=config)
            async for _ in result.stream_events():
                pass
        else:
            result = await Runner.run(agent, input=question, run_config=config)
        return float(str(result.final_output).strip() == data["answer"])


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_openai_agents_sdk_runs_a_function_tool_through_the_proxy(tok, transport, stream):
    traj, engine = await episode(AgentsSDKAgent(stream), tok, transport, [CALL, "5"])
    first, second = engine.requests
    assert '"name": "add"' in tok.decode(first.input_ids)  # the function tool was rendered
    history = tok.decode(second.input_ids)
    assert "<|im_start|>tool\n5.0<|im_end|>" in history  # the SDK ran the tool, sent its result
    assert traj["input_ids"].shape[0] == 2  # two responses, exported individually
    assert traj["rewards"].tolist() == [
        1.0,
        1.0,
    ]  # the float reward goes to the last completion, discount 1


@pytest.mark.asyncio
async def test_malformed_tool_call_stays_in_the_reply_and_is_reported(tok):
    bad = '<tool_call>{"name": "add", "arguments": {"a": 2,}}</tool_call>'
    engine = ScriptedEngine([bad], tokenizer=tok)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        r = await openai_client(s.extra_kwargs).responses.create(
            model="m", input="What is 2+3?", tools=[RESPONSES_TOOL]
        )
        assert r.output[0].type == "message" and r.output_text == bad
        assert len(s.warnings) == 1 and "could not be parsed" in s.warnings[0]


BAD_REQUESTS = [
    ("/v1/responses", {"input": [{"type": "web_search_call", "id": "x"}]}, "web_search_call"),
    ("/v1/responses", {"input": "hi", "n": 2}, "['n']"),
    (
        "/v1/responses",
        {
            "input": "hi",
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "array"}}],
        },
        "type 'object'",
    ),
    ("/v1/responses", {"input": "hi", "tools": [{"type": "web_search"}]}, "function tools only"),
    (
        "/v1/responses",
        {"input": [{"type": "function_call_output", "call_id": "call_nope", "output": "5"}]},
        "call_nope",
    ),
    ("/v1/responses", {"input": "hi", "previous_response_id": "resp_unknown"}, "resp_unknown"),
    (
        "/v1/responses",
        {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}]},
        "not a file_id",
    ),
    ("/v1/messages", {"messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
    (
        "/v1/messages",
        {"max_tokens": 5, "n": 2, "messages": [{"role": "user", "content": "hi"}]},
        "['n']",
    ),
    (
        "/v1/messages",
        {
            "max_tokens": 5,
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "5"}],
                }
            ],
        },
        "toolu_x",
    ),
    (
        "/v1/messages",
        {
            "max_tokens": 5,
            "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
        },
        "content[0].source must be",
    ),
    (
        "/v1/messages",
        {
            "max_tokens": 5,
            "tools": [{"name": "f", "input_schema": {"properties": []}}],
            "messages": [{"role": "user", "content": "hi"}],
        },
        "properties",
    ),
    ("/v1/messages", {"max_tokens": 5, "messages": [{"role": "hacker", "content": "hi"}]}, "role"),
    ("/chat/completions", {"messages": [{"role": "hacker", "content": "hi"}]}, "hacker"),
    (
        "/chat/completions",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": ""}}],
        },
        "name",
    ),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("path", "body", "named"), BAD_REQUESTS, ids=[f"{p}-{n}" for p, _, n in BAD_REQUESTS]
)
async def test_bad_requests_are_a_4xx_that_names_the_field_and_record_nothing(
    tok, path, body, named
):
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        http, key = s.extra_kwargs["http_client"], s.extra_kwargs["api_key"]
        answer = await http.post(path, json=body, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert named in error["message"]
        if path == "/v1/messages":
            assert answer.json()["type"] == "error" and error["type"] == "invalid_request_error"
        assert s.completion_ids == [] and engine.requests == []
        ok = await openai_client(s.extra_kwargs).responses.create(model="m", input="hi")
        assert ok.output_text == "5" and s.completion_ids == [ok.id]  # the session still works


@pytest.mark.asyncio
async def test_a_stream_abandoned_halfway_leaves_the_session_usable(tok):
    engine = ScriptedEngine(["5" * 200], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok, transport="socket") as proxy, proxy.session() as s:
        client = openai_client(s.extra_kwargs)
        stream = await client.chat.completions.create(
            model="m", messages=QUESTION["messages"], stream=True
        )
        first = None
        async for chunk in stream:
            first = chunk.id
            break  # the agent stops reading after the first chunk
        await stream.close()
        again = await client.chat.completions.create(model="m", messages=QUESTION["messages"])
        assert again.choices[0].message.content == "5" * 200
        # Whether the abandoned answer counts depends on whether the server had written all of
        # it before the close (TCP buffers): recorded whole or not at all, never half.
        assert s.completion_ids in ([again.id], [first, again.id])
        exported = s.export()
        assert all(item.model_response.output_len == 201 for item in exported.values())


@pytest.mark.asyncio
async def test_the_rollout_report_says_a_tool_call_could_not_be_parsed(tok):
    from areal_runtime.infra.workflow_executor import run_rollout

    class Agent:
        async def run(self, data, **kw):
            r = await openai_client(kw).responses.create(
                model="m", input="hi", tools=[RESPONSES_TOOL]
            )
            return 1.0 if r.output_text else 0.0

    bad = '<tool_call>{"name": "add", "arguments": }</tool_call>'
    engine = ScriptedEngine([bad, "5"], tokenizer=tok)
    result = await run_rollout(Agent(), [QUESTION, QUESTION], engine, concurrency=1)
    first, second = result.episodes
    assert first.accepted and len(first.notes) == 1 and "could not be parsed" in first.notes[0]
    assert second.notes == []
    assert "episodes with notes 1" in result.report.format()


class LangChainAgent:
    """LangChain's ChatOpenAI through chat completions, invoked or streamed."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream

    async def run(self, data, **kw):
        from langchain_openai import ChatOpenAI

        llm = ChatOpenAI(
            model="default",
            base_url=kw["base_url"],
            api_key=kw["api_key"],
            http_async_client=kw["http_client"],
            max_retries=0,
        )
        question = data["messages"][0]["content"]
        if self.stream:
            text = "".join([chunk.content async for chunk in llm.astream(question)])
        else:
            text = (await llm.ainvoke(question)).content
        return float(text == data["answer"])


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_langchain_chat_openai_invoked_and_streamed(tok, transport):
    plain, _ = await episode(LangChainAgent(stream=False), tok, transport, ["5"])
    streamed, _ = await episode(LangChainAgent(stream=True), tok, transport, ["5"])
    assert plain["rewards"].tolist() == [1.0]
    for key in plain:
        assert plain[key].tolist() == streamed[key].tolist(), key


@pytest.mark.asyncio
async def test_a_prompt_the_engine_refuses_is_a_400_not_a_500(tok):
    from areal_runtime.engine.local import LocalEngine
    from areal_runtime.models.default_model import MAX_POSITIONS

    engine = LocalEngine.default()
    try:
        async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
            # 3 tokens a repeat: past the embedded model's positions.
            long = [{"role": "user", "content": "1 + " * (MAX_POSITIONS // 3 + 1)}]
            answer = await s.extra_kwargs["http_client"].post(
                "/v1/chat/completions",
                json={"messages": long},
                headers={"Authorization": f"Bearer {s.extra_kwargs['api_key']}"},
            )
            assert answer.status_code == 400
            assert "shorten the prompt" in answer.json()["error"]["message"]
            assert s.completion_ids == []
    finally:
        engine.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_token_counts_are_the_prompts_the_engine_reads_and_record_nothing(tok, transport):
    """Anthropic's ``messages.count_tokens`` and OpenAI's ``responses.input_tokens.count``
    (an agent counting before it trims its history) answer the usage the request then gets."""
    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok, transport=transport) as proxy, proxy.session() as s:
        kw = s.extra_kwargs
        messages = anthropic_client(kw)
        body = {
            "model": "m",
            "system": "Be brief.",
            "messages": QUESTION["messages"],
            "tools": [ANTHROPIC_TOOL],
        }
        counted = await messages.messages.count_tokens(**body)
        assert s.completion_ids == []  # a count is no interaction
        answered = await messages.messages.create(max_tokens=8, **body)
        assert (
            counted.input_tokens == answered.usage.input_tokens == len(engine.requests[0].input_ids)
        )

        responses = openai_client(kw)
        first = {
            "model": "m",
            "instructions": "Be brief.",
            "input": "2+3?",
            "tools": [RESPONSES_TOOL],
        }
        counted = await responses.responses.input_tokens.count(**first)
        answered = await responses.responses.create(**first)
        assert (
            counted.input_tokens == answered.usage.input_tokens == len(engine.requests[1].input_ids)
        )
        follow_up = {"model": "m", "input": "And 2+4?", "previous_response_id": answered.id}
        counted = await responses.responses.input_tokens.count(**follow_up)
        answered = await responses.responses.create(**follow_up)
        assert (
            counted.input_tokens == answered.usage.input_tokens == len(engine.requests[2].input_ids)
        )
        assert len(s.completion_ids) == 3


@pytest.mark.asyncio
async def test_a_token_count_refuses_as_its_api_does(tok):
    engine = ScriptedEngine(["5"], tokenizer=tok)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        kw = s.extra_kwargs
        with pytest.raises(anthropic.BadRequestError, match="'messages' must be a non-empty list"):
            await anthropic_client(kw).messages.count_tokens(model="m", messages=[])
        with pytest.raises(anthropic.AuthenticationError):
            await anthropic_client({**kw, "api_key": "not-a-session"}).messages.count_tokens(
                model="m", messages=QUESTION["messages"]
            )
        with pytest.raises(openai.BadRequestError, match="names no response of this session"):
            await openai_client(kw).responses.input_tokens.count(
                model="m", input="hi", previous_response_id="resp_unknown"
            )
    assert engine.requests == []


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PNG_URI = f"data:image/png;base64,{PNG}"


@pytest.mark.asyncio
async def test_an_image_reaches_the_engine_from_every_api(tok):
    """Images go to the engine as ``image_data`` (as AReaL's client sends them to SGLang), and
    the chat template places them; they were dropped from the prompt without a word."""
    from areal_runtime.experimental.openai import ArealOpenAI

    engine = ScriptedEngine(["5"], tokenizer=tok, cycle=True)
    async with AgentProxy(engine, tok) as proxy, proxy.session() as s:
        kw = s.extra_kwargs
        chat = [
            {"type": "text", "text": "What is"},
            {"type": "image_url", "image_url": {"url": PNG_URI}},
        ]
        await openai_client(kw).chat.completions.create(
            model="m", messages=[{"role": "user", "content": chat}]
        )
        await openai_client(kw).responses.create(
            model="m",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What is"},
                        {"type": "input_image", "image_url": PNG_URI},
                    ],
                }
            ],
        )
        await anthropic_client(kw).messages.create(
            model="m",
            max_tokens=8,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        },
                    ],
                }
            ],
        )
    await ArealOpenAI(engine=engine, tokenizer=tok).chat.completions.create(
        model="m", messages=[{"role": "user", "content": chat}]
    )
    assert [r.image_data for r in engine.requests] == [[PNG]] * 4
    prompts = {tuple(r.input_ids) for r in engine.requests}
    assert len(prompts) == 1  # the same prompt, whichever API carried the image
    assert "What is<|vision_start|><|image_pad|><|vision_end|>" in tok.decode(
        engine.requests[0].input_ids
    )

    engine.requests.clear()
    address = "https://example.com/cat.png"
    await ArealOpenAI(engine=engine, tokenizer=tok).chat.completions.create(
        model="m",
        messages=[
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": address}}]}
        ],
    )
    assert engine.requests[0].image_data == [address]


@pytest.mark.asyncio
async def test_an_image_the_chat_template_would_drop_is_refused(tok):
    text_only = copy.deepcopy(tok)
    text_only.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.content is string %}"
        "{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'text' %}{{ p.text }}"
        "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    engine = ScriptedEngine(["5"], tokenizer=text_only)
    async with AgentProxy(engine, text_only) as proxy, proxy.session() as s:
        image = {"type": "image_url", "image_url": {"url": PNG_URI}}
        with pytest.raises(openai.BadRequestError, match="chat template has no place for one"):
            await openai_client(s.extra_kwargs).chat.completions.create(
                model="m", messages=[{"role": "user", "content": [image]}]
            )
    assert engine.requests == []
