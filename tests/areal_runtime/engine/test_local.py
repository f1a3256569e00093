# SPDX-License-Identifier: Apache-2.0
"""LocalEngine: exactness against model.generate, batching, stops, versions, failures."""

import asyncio
import copy

import pytest
import torch

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine.local import EngineDeadError, LocalEngine


def stock(model):
    """``model`` as transformers runs it: a LocalEngine switches the model it serves to its own
    decode attention, so references run on a copy switched back to plain SDPA."""
    if model.config._attn_implementation == "sdpa":
        return model
    plain = copy.deepcopy(model)
    plain.set_attn_implementation("sdpa")
    return plain


def reference(model, prompt, n):
    model = stock(model)
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=n, do_sample=False, output_logits=True,
            return_dict_in_generate=True, pad_token_id=0, eos_token_id=None,
        )  # fmt: skip
    tokens = out.sequences[0, len(prompt) :].tolist()
    logprobs = [
        torch.log_softmax(step[0].float(), -1)[t].item() for step, t in zip(out.logits, tokens)
    ]
    return tokens, logprobs


@pytest.mark.asyncio
async def test_greedy_is_token_exact_with_staggered_arrivals(random_model, tok):
    prompts = [tok.encode("What is 1+2? " * k) for k in (1, 3, 2, 6, 1, 4, 2)]
    engine = LocalEngine(random_model, tok, max_batch=4)

    async def one(i, prompt):
        await asyncio.sleep(0.005 * i)
        g = GenerationHyperparameters(max_new_tokens=6 + i, greedy=True)
        return await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))

    try:
        responses = await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts)))
    finally:
        engine.close()
    for i, (prompt, resp) in enumerate(zip(prompts, responses)):
        tokens, logprobs = reference(random_model, prompt, 6 + i)
        assert resp.output_tokens == tokens
        assert max(abs(a - b) for a, b in zip(resp.output_logprobs, logprobs)) < 1e-5
        assert resp.stop_reason == "length" and resp.output_versions == [0] * len(tokens)
        assert resp.input_tokens == prompt and 0 < resp.ttft <= resp.latency


@pytest.mark.asyncio
async def test_stop_ids_min_new_tokens_and_stop_strings(random_model, tok):
    prompt = tok.encode("hello there")
    async with LocalEngine(random_model, tok) as engine:
        free = await engine.agenerate(
            ModelRequest(
                input_ids=prompt, gconfig=GenerationHyperparameters(max_new_tokens=5, greedy=True)
            )
        )
        stop_at = free.output_tokens[2]
        g = GenerationHyperparameters(max_new_tokens=5, greedy=True, stop_token_ids=[stop_at])
        stopped = await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))
        first = free.output_tokens.index(stop_at)
        assert stopped.output_tokens == free.output_tokens[: first + 1]
        assert stopped.stop_reason == "stop"
        late = await engine.agenerate(
            ModelRequest(input_ids=prompt, gconfig=g.new(min_new_tokens=4))
        )
        assert stop_at not in late.output_tokens[:4]
        text = tok.decode(free.output_tokens[:2])
        g = GenerationHyperparameters(max_new_tokens=5, greedy=True, stop=[text])
        by_string = await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))
        assert by_string.stop_reason == "stop" and len(by_string.output_tokens) <= 2


@pytest.mark.asyncio
async def test_sampling_respects_top_k_and_logprob_modes(random_model, tok):
    prompt = tok.encode("sample me")
    g = GenerationHyperparameters(max_new_tokens=8, temperature=2.0, top_k=1)
    async with LocalEngine(random_model, tok) as engine:
        top1 = await engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))
    greedy, raw_reference = reference(random_model, prompt, 8)
    assert top1.output_tokens == greedy  # top_k=1 is greedy whatever the temperature
    async with LocalEngine(random_model, tok, raw_logprobs=True) as raw_engine:
        raw = await raw_engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g))
    assert raw.output_tokens == greedy
    assert max(abs(a - b) for a, b in zip(raw.output_logprobs, raw_reference)) < 1e-5
    # SGLang semantics: the argmax is less likely once temperature 2 flattens the distribution
    assert all(s < r for s, r in zip(top1.output_logprobs, raw.output_logprobs))


@pytest.mark.asyncio
async def test_many_concurrent_sampled_requests_all_finish(random_model, tok):
    g = GenerationHyperparameters(max_new_tokens=10, temperature=1.0, top_p=0.9, ignore_eos=True)
    async with LocalEngine(random_model, tok, max_batch=8) as engine:
        responses = await asyncio.gather(
            *(
                engine.agenerate(ModelRequest(input_ids=tok.encode(f"n {i}"), gconfig=g))
                for i in range(20)
            )
        )
    for r in responses:
        assert r.output_len == 10 == len(r.output_logprobs) == len(r.output_versions)
        assert all(0 <= t < 512 for t in r.output_tokens)


@pytest.mark.asyncio
async def test_cancelled_caller_frees_its_row(random_model, tok):
    """Counted, not timed: with one row, a short request after a cancelled 250-token one
    needs under 250 forward passes in all only if the cancelled row was freed."""
    passes = []
    hook = random_model.register_forward_pre_hook(lambda module, args: passes.append(1))
    try:
        await _cancel_then_ask(random_model, tok)
    finally:
        hook.remove()
    assert 0 < len(passes) < 250, len(passes)


async def _cancel_then_ask(random_model, tok):
    async with LocalEngine(random_model, tok, max_batch=1) as engine:
        long = asyncio.ensure_future(
            engine.agenerate(
                ModelRequest(
                    input_ids=[1, 2, 3],
                    gconfig=GenerationHyperparameters(max_new_tokens=250, ignore_eos=True),
                )
            )
        )
        await asyncio.sleep(0.002)  # admitted, far from 250 tokens (it finished within 50 ms)
        long.cancel()
        short = await engine.agenerate(
            ModelRequest(
                input_ids=[1, 2],
                gconfig=GenerationHyperparameters(max_new_tokens=3, ignore_eos=True),
            )
        )
        assert short.output_len == 3
    assert long.cancelled()


@pytest.mark.asyncio
async def test_update_weights_switches_versions_mid_request(random_model, tok):
    engine = LocalEngine(random_model, tok)
    state = {k: v.clone() for k, v in random_model.state_dict().items()}
    try:
        call = asyncio.ensure_future(
            engine.agenerate(
                ModelRequest(
                    input_ids=[1, 2, 3],
                    gconfig=GenerationHyperparameters(max_new_tokens=250, ignore_eos=True),
                )
            )
        )
        await asyncio.sleep(0)  # queued first, so admitted no later than the probe below
        probe = GenerationHyperparameters(max_new_tokens=1)
        await engine.agenerate(ModelRequest(input_ids=[4], gconfig=probe))
        assert await asyncio.wrap_future(engine.update_weights(state)) == 1
        resp = await call
    finally:
        engine.close()
    assert resp.output_versions[0] == 0 and resp.output_versions[-1] == 1
    switch = resp.output_versions.index(1)
    assert resp.output_versions == [0] * switch + [1] * (len(resp.output_versions) - switch)
    assert engine.get_version() == 1


@pytest.mark.asyncio
async def test_dead_worker_fails_pending_and_later_calls(random_model, tok, monkeypatch):
    engine = LocalEngine(random_model, tok)

    def boom(*args, **kwargs):
        raise RuntimeError("simulated kernel failure")

    monkeypatch.setattr(engine._runner, "decode_step", boom)
    g = GenerationHyperparameters(max_new_tokens=5)
    with pytest.raises(EngineDeadError, match="simulated kernel failure"):
        await asyncio.wait_for(engine.agenerate(ModelRequest(input_ids=[1, 2], gconfig=g)), 10)
    with pytest.raises(EngineDeadError, match="worker thread died"):
        await engine.agenerate(ModelRequest(input_ids=[1, 2], gconfig=g))


@pytest.mark.asyncio
async def test_prompt_longer_than_the_model_is_refused(random_model, tok):
    async with LocalEngine(random_model, tok) as engine:
        with pytest.raises(ValueError, match="supports 256 positions"):
            await engine.agenerate(
                ModelRequest(input_ids=[1] * 300, gconfig=GenerationHyperparameters())
            )
        with pytest.raises(ValueError, match="outside the vocabulary"):
            await engine.agenerate(
                ModelRequest(input_ids=[600], gconfig=GenerationHyperparameters())
            )


@pytest.mark.asyncio
async def test_a_model_that_declares_its_longest_answer_stops_there(random_model, tok):
    """The embedded model declares generation_config.max_new_tokens; a client's 128k is capped."""
    random_model.generation_config.max_new_tokens = 5
    try:
        async with LocalEngine(random_model, tok) as engine:
            g = GenerationHyperparameters(max_new_tokens=100, greedy=True, stop_token_ids=[])
            resp = await engine.agenerate(ModelRequest(input_ids=[1, 2, 3], gconfig=g))
    finally:
        random_model.generation_config.max_new_tokens = None
    assert resp.output_len == 5 and resp.stop_reason == "length"


def test_the_embedded_model_declares_its_longest_answer():
    from areal_runtime.models.default_model import MAX_NEW_TOKENS, load_default_model

    model, _ = load_default_model()
    assert model.generation_config.max_new_tokens == MAX_NEW_TOKENS


@pytest.mark.asyncio
async def test_the_event_loop_is_not_blocked_while_serving(random_model, tok):
    from areal_runtime.infra.stall_detector import LoopStallDetector

    g = GenerationHyperparameters(max_new_tokens=20)
    async with LocalEngine(random_model, tok) as engine:
        with LoopStallDetector(0.1) as detector:
            await asyncio.gather(
                *(
                    engine.agenerate(ModelRequest(input_ids=[1, 2, i + 3], gconfig=g))
                    for i in range(16)
                )
            )
    assert [s.format() for s in detector.stalls if s.counts] == []  # a busy machine is not a stall


def test_from_pretrained_round_trip(tmp_path, tok):
    from areal_runtime.models.default_model import load_default_model, save_default_model

    save_default_model(tmp_path / "m")
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        LocalEngine.from_pretrained(tmp_path)
    engine = LocalEngine.from_pretrained(tmp_path / "m")
    model, _ = load_default_model()
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "What is 7+8?"}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
    )
    g = GenerationHyperparameters(max_new_tokens=4, greedy=True).new_with_stop_and_pad_token_ids(
        tok
    )
    resp = asyncio.run(engine.agenerate(ModelRequest(input_ids=prompt, gconfig=g, tokenizer=tok)))
    engine.close()
    ref, _ = reference(model, prompt, resp.output_len)
    assert resp.output_tokens == ref
    assert engine.tokenizer.decode(resp.output_tokens_without_stop) == "15"


def test_from_pretrained_loads_bfloat16_on_request_and_refuses_other_dtypes(tmp_path, tok):
    from areal_runtime.models.default_model import save_default_model

    folder = save_default_model(tmp_path / "m")
    with pytest.raises(ValueError, match="dtype must be 'float32' or 'bfloat16'"):
        LocalEngine.from_pretrained(folder, dtype="float16")
    engine = LocalEngine.from_pretrained(folder, dtype="bfloat16")
    assert next(engine.model.parameters()).dtype == torch.bfloat16
    try:
        resp = asyncio.run(
            engine.agenerate(
                ModelRequest(
                    input_ids=tok.encode("What is 7+8?"),
                    gconfig=GenerationHyperparameters(max_new_tokens=3, ignore_eos=True),
                )
            )
        )
    finally:
        engine.close()
    assert resp.output_len == 3 and all(lp <= 0 for lp in resp.output_logprobs)
