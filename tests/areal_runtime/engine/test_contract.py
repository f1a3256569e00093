# SPDX-License-Identifier: Apache-2.0
"""The agenerate contract every engine shares (validate_request and first_stop)."""

import pytest

from areal_runtime.api import GenerationHyperparameters, ModelRequest
from areal_runtime.engine._contract import first_stop, stop_ids_for, validate_request


def req(ids=(1, 2, 3), **g) -> ModelRequest:
    return ModelRequest(input_ids=list(ids), gconfig=GenerationHyperparameters(**g))


def test_budget_is_the_smaller_of_the_two_limits():
    assert validate_request(req(max_new_tokens=10, max_tokens=100)) == 10
    assert validate_request(req(max_new_tokens=10, max_tokens=8)) == 5


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (req(n_samples=2), "n_samples=2"),
        (req(ids=()), "empty prompt"),
        (req(ids=(1, 999)), r"outside the vocabulary \[0, 100\)"),
        (req(max_tokens=3), "no room to generate: the prompt has 3 tokens"),
        (req(max_new_tokens=-1), "max_new_tokens must be >= 0"),
        (req(min_new_tokens=5, max_new_tokens=2), "min_new_tokens=5"),
        (req(temperature=-1), "temperature"),
        (req(top_p=0), "top_p"),
        (req(top_k=0), "top_k"),
        (req(use_beam_search=True), "use_beam_search"),
        (req(stop_token_ids=[None]), "stop_token_ids must be ints"),
        (req(stop="x"), "stop must be a list"),
    ],
)
def test_bad_requests_are_named(request_, message):
    with pytest.raises(ValueError, match=message):
        validate_request(request_, vocab_size=100)


def test_unknown_sampling_option_is_refused():
    r = req()
    r.gconfig.beam_width = 3
    with pytest.raises(ValueError, match="beam_width"):
        validate_request(r)


class Tok:
    eos_token_id = 9

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(96 + i) for i in ids)


def test_first_stop_rules():
    r = req(stop_token_ids=[7])
    assert first_stop([1, 7, 2], r, 10) == (2, "stop")  # stop id kept
    assert first_stop([1, 2, 3], r, 2) == (2, "length")
    assert first_stop([1, 9], r, 10, Tok()) == (2, "stop")  # eos from the tokenizer
    assert first_stop([1, 9], req(ignore_eos=True), 10, Tok()) == (2, "stop")  # script ended
    assert first_stop([7, 1, 7], req(stop_token_ids=[7], min_new_tokens=2), 10) == (3, "stop")
    assert first_stop([1, 2, 3, 4], req(stop=["bc"]), 10, Tok()) == (3, "stop")


@pytest.mark.asyncio
@pytest.mark.parametrize("ignore_eos", [False, True])
async def test_recording_engine_records_the_stop_ids_the_engine_stopped_on(ignore_eos):
    """The consistency checks read ``SampledCall.stop_ids``: the engine's rule, not a copy."""
    from areal_runtime.engine.recording import RecordingEngine
    from areal_runtime.engine.scripted import ScriptedEngine
    from areal_runtime.models.tokenizers import tiny_tokenizer

    tok = tiny_tokenizer()
    recorder = RecordingEngine(ScriptedEngine([[5, 6]], tokenizer=tok))
    request = ModelRequest(
        input_ids=[1, 2],
        gconfig=GenerationHyperparameters(stop_token_ids=[9, 4], ignore_eos=ignore_eos),
    )
    await recorder.agenerate(request)
    (call,) = recorder.calls(None)
    want = {9, 4} if ignore_eos else {9, 4, tok.eos_token_id}
    assert set(call.stop_ids) == want == stop_ids_for(request, tok)
