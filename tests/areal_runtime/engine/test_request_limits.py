# SPDX-License-Identifier: Apache-2.0
"""One set of request limits for both HTTP fronts of an engine: the proxy and /generate.

The proxy forwards a chat request's completion length to a ``RemoteEngine``, which sends it
to an SGLang server as ``max_new_tokens``: what the proxy lets through must pass the server's
check too, and both take their limits from the one ``RequestLimits``.
"""

import pytest

from areal_runtime.engine.local.server import GenerateRequestError, parse_generate, serve
from areal_runtime.engine.remote import RemoteEngine
from areal_runtime.engine.request_limits import RequestLimits
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai.proxy import AgentProxy


def test_the_server_accepts_every_length_the_limits_allow_and_refuses_one_more() -> None:
    limits = RequestLimits(max_new_tokens=40)
    body = {"input_ids": [1], "sampling_params": {"max_new_tokens": 40}}
    assert parse_generate(body, limits)[1].max_new_tokens == 40
    body["sampling_params"]["max_new_tokens"] = 41
    with pytest.raises(GenerateRequestError, match="between 1 and 40, got 41"):
        parse_generate(body, limits)


@pytest.mark.asyncio
async def test_a_length_the_proxy_accepts_passes_the_sglang_server_behind_it(tok) -> None:
    """Claude Code's default of 128000 tokens, proxy -> RemoteEngine -> /generate."""
    served = ScriptedEngine(["forty-two"], tokenizer=tok, cycle=True)
    server = await serve(served)
    try:
        remote = RemoteEngine([server.address], tokenizer=tok)
        async with AgentProxy(remote, tok) as proxy, proxy.session() as s:
            client, key = s.extra_kwargs["http_client"], s.extra_kwargs["api_key"]
            resp = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 128000},
                headers={"authorization": f"Bearer {key}"},
            )
        assert resp.status_code == 200, resp.text
        assert resp.json()["choices"][0]["message"]["content"] == "forty-two"
        assert served.requests[0].gconfig.max_new_tokens == 128000
    finally:
        await server.close()


def test_limits_take_keywords_only() -> None:
    """The proxy's and the server's old classes ordered their fields differently."""
    with pytest.raises(TypeError):
        RequestLimits(8 << 20, 4096)  # type: ignore[misc]
    assert RequestLimits(max_input_ids=4096).max_input_ids == 4096
