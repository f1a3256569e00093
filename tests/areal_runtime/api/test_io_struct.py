# SPDX-License-Identifier: Apache-2.0
from types import SimpleNamespace

import pytest

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.io_struct import ModelRequest, ModelResponse

TOK = SimpleNamespace(eos_token_id=2, pad_token_id=0)


def test_request_defaults_and_unique_rid():
    a, b = ModelRequest(), ModelRequest()
    assert a.rid != b.rid
    assert a.input_ids == [] and a.metadata == {} and a.image_data == []
    assert a.tokenizer is None and a.processor is None and a.vision_msg_vllm is None
    assert isinstance(a.gconfig, GenerationHyperparameters)


def test_request_copy_is_independent_but_shares_tokenizer():
    tok = object()
    req = ModelRequest(
        input_ids=[1, 2],
        gconfig=GenerationHyperparameters(stop_token_ids=[2]),
        metadata={"k": 1},
        tokenizer=tok,
        image_data=["img"],
        vision_msg_vllm=[{"a": 1}],
    )
    copy = req.copy()
    copy.input_ids.append(3)
    copy.gconfig.stop_token_ids.append(9)
    copy.metadata["k"] = 2
    copy.image_data.append("x")
    copy.vision_msg_vllm.append({})
    assert req.input_ids == [1, 2] and req.gconfig.stop_token_ids == [2]
    assert req.metadata == {"k": 1} and req.image_data == ["img"]
    assert req.vision_msg_vllm == [{"a": 1}]
    assert copy.rid == req.rid and copy.tokenizer is tok


def test_response_lengths_and_defaults():
    r = ModelResponse(input_tokens=[1, 2, 3], output_tokens=[4, 2])
    assert (r.input_len, r.output_len) == (3, 2)
    assert r.stop_reason == "stop" and r.latency == float("inf") and r.ttft == float("inf")


@pytest.mark.parametrize(
    ("tokens", "reason", "expected"),
    [
        ([5, 6, 2], "stop", [5, 6]),
        ([5, 2, 0, 0], "stop", [5]),  # pad after eos
        ([5, 6, 2], "length", [5, 6, 2]),
        ([5, 6], "abort", [5, 6]),
        ([5, 6], "stop", [5, 6]),  # stop string: AReaL raises here
        ([], "stop", []),
    ],
)
def test_output_tokens_without_stop(tokens, reason, expected):
    r = ModelResponse(output_tokens=tokens, stop_reason=reason, tokenizer=TOK)
    assert r.output_tokens_without_stop == expected


def test_output_tokens_without_stop_multi_eos():
    tok = SimpleNamespace(eos_token_id=[2, 3], pad_token_id=None)
    r = ModelResponse(output_tokens=[7, 3], tokenizer=tok)
    assert r.end_with_stop and r.output_tokens_without_stop == [7]


def test_all_stop_tokens_raises_like_areal():
    r = ModelResponse(output_tokens=[2, 0], tokenizer=TOK)
    with pytest.raises(ValueError, match="All output_tokens are EOS or PAD"):
        _ = r.output_tokens_without_stop


def test_missing_tokenizer_is_explained():
    r = ModelResponse(output_tokens=[1])
    with pytest.raises(ValueError, match="tokenizer"):
        _ = r.end_with_stop
    assert ModelResponse(output_tokens=[], tokenizer=TOK).end_with_stop is False
