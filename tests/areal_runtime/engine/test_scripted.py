# SPDX-License-Identifier: Apache-2.0
import asyncio

import pytest

from areal_runtime.engine.scripted import ScriptedEngine, ScriptedReply, ScriptExhaustedError

from .conftest import chat_ids, request


@pytest.mark.asyncio
async def test_replays_in_order_appends_eos_and_records_requests(tok):
    engine = ScriptedEngine(["The answer is 4", "5"], tokenizer=tok, logprob=-0.25, version=3)
    req = request(tok, max_new_tokens=32)
    first = await engine.agenerate(req)
    second = await engine.agenerate(req)
    assert tok.decode(first.output_tokens_without_stop) == "The answer is 4"
    assert first.output_tokens[-1] == tok.eos_token_id and first.stop_reason == "stop"
    assert first.output_logprobs == [-0.25] * first.output_len
    assert first.output_versions == [3] * first.output_len
    assert first.input_tokens == req.input_ids and first.tokenizer is tok
    assert tok.decode(second.output_tokens_without_stop) == "5"
    assert len(engine.requests) == 2 and engine.requests[0] is not req
    assert engine.requests[0].gconfig.stop_token_ids == req.gconfig.stop_token_ids
    with pytest.raises(ScriptExhaustedError, match="2 scripted completion"):
        await engine.agenerate(req)


@pytest.mark.asyncio
async def test_cycle_dict_and_callable_scripts(tok):
    cyc = ScriptedEngine(["a"], tokenizer=tok, cycle=True)
    for _ in range(3):
        assert tok.decode((await cyc.agenerate(request(tok))).output_tokens_without_stop) == "a"
    by_prompt = ScriptedEngine(
        {"What is 1+1?<|im_end|>\n<|im_start|>assistant\n": "2"}, tokenizer=tok
    )
    assert (
        tok.decode(
            (await by_prompt.agenerate(request(tok, "What is 1+1?"))).output_tokens_without_stop
        )
        == "2"
    )
    by_ids = ScriptedEngine({tuple(chat_ids(tok, "hi")): [5, 6]}, tokenizer=tok)
    assert (await by_ids.agenerate(request(tok, "hi"))).output_tokens[:2] == [5, 6]
    with pytest.raises(KeyError, match="no scripted completion"):
        await by_prompt.agenerate(request(tok, "other"))
    fn = ScriptedEngine(lambda r: str(len(r.input_ids)), tokenizer=tok)
    resp = await fn.agenerate(request(tok, "hi"))
    assert tok.decode(resp.output_tokens_without_stop) == str(len(chat_ids(tok, "hi")))


@pytest.mark.asyncio
async def test_budget_truncates_to_length_and_stop_ids_cut(tok):
    engine = ScriptedEngine(["The answer is 4", [5, 6, 7, 8]], tokenizer=tok)
    resp = await engine.agenerate(request(tok, max_new_tokens=2))
    assert resp.output_len == 2 and resp.stop_reason == "length"
    assert resp.output_tokens_without_stop == resp.output_tokens
    r = request(tok)
    r.gconfig.stop_token_ids.append(6)
    resp = await engine.agenerate(r)
    assert resp.output_tokens == [5, 6] and resp.stop_reason == "stop"


@pytest.mark.asyncio
async def test_stop_strings_end_the_output(tok):
    engine = ScriptedEngine(["first. second"], tokenizer=tok)
    resp = await engine.agenerate(request(tok, stop=["."]))
    assert tok.decode(resp.output_tokens).endswith(".") and "second" not in tok.decode(
        resp.output_tokens
    )
    assert resp.stop_reason == "stop"


@pytest.mark.asyncio
async def test_given_logprobs_versions_and_version_switch(tok):
    engine = ScriptedEngine(
        [ScriptedReply(tokens=[5, 6, 7], logprobs=[-1, -2, -3], versions=[0, 0, 1])], tokenizer=tok
    )
    resp = await engine.agenerate(request(tok))
    assert resp.output_tokens == [5, 6, 7, tok.eos_token_id]
    assert resp.output_logprobs == [-1, -2, -3, -3] and resp.output_versions == [0, 0, 1, 1]
    engine.set_version(4)
    assert engine.get_version() == 4
    with pytest.raises(ValueError, match="one per token"):
        await ScriptedEngine([ScriptedReply(tokens=[1, 2, 3], logprobs=[0.0])]).agenerate(
            request(tok)
        )
    with pytest.raises(ValueError, match="exactly one of"):
        ScriptedReply()


@pytest.mark.asyncio
async def test_latency_lets_concurrent_calls_overlap(tok, monkeypatch):
    """Counted, not timed (a busy machine stretches wall time): all five latency waits are in
    flight at once."""
    engine = ScriptedEngine(["x"], tokenizer=tok, cycle=True, latency_s=0.2)
    real_sleep = asyncio.sleep
    waiting = {"now": 0, "most": 0}

    async def counted_sleep(delay, *args, **kwargs):
        waiting["now"] += 1
        waiting["most"] = max(waiting["most"], waiting["now"])
        try:
            return await real_sleep(delay, *args, **kwargs)
        finally:
            waiting["now"] -= 1

    monkeypatch.setattr(asyncio, "sleep", counted_sleep)
    responses = await asyncio.gather(*(engine.agenerate(request(tok)) for _ in range(5)))
    assert waiting["most"] == 5, waiting
    assert all(r.latency >= 0.2 for r in responses)


@pytest.mark.asyncio
async def test_contract_errors_and_text_without_tokenizer(tok):
    engine = ScriptedEngine(["x"], tokenizer=tok)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        await engine.agenerate(request(tok).__class__(input_ids=[10**6]))
    with pytest.raises(ValueError, match="needs a tokenizer"):
        await ScriptedEngine(["x"]).agenerate(request(tok))
    with pytest.raises(TypeError, match="not a str"):
        ScriptedEngine("x")
