# SPDX-License-Identifier: Apache-2.0
import logging
from dataclasses import fields
from types import SimpleNamespace

import pytest

from areal_runtime.api.cli_args import GenerationHyperparameters, stop_ids_of

AREAL_DEFAULTS = {
    "n_samples": 1,
    "max_new_tokens": 16384,
    "min_new_tokens": 0,
    "max_tokens": 32768,
    "greedy": False,
    "top_p": 1.0,
    "top_k": 100_000_000,
    "temperature": 1.0,
    "stop_token_ids": [],
    "ignore_eos": False,
    "skip_special_tokens": True,
    "stop": None,
    "frequency_penalty": 0.0,
    "lora_name": "default_lora",
    "use_beam_search": False,
}


def test_fields_and_defaults_match_areal():
    g = GenerationHyperparameters()
    assert [f.name for f in fields(g)] == list(AREAL_DEFAULTS)
    assert {f.name: getattr(g, f.name) for f in fields(g)} == AREAL_DEFAULTS


def test_new_is_a_deep_copy_with_overrides():
    g = GenerationHyperparameters(stop_token_ids=[5], stop=["x"])
    h = g.new(temperature=0.5)
    h.stop_token_ids.append(6)
    h.stop.append("y")
    assert g.stop_token_ids == [5] and g.stop == ["x"]
    assert h.temperature == 0.5 and g.temperature == 1.0


def test_new_rejects_unknown_fields_by_name():
    with pytest.raises(TypeError, match="max_new_token"):
        GenerationHyperparameters().new(max_new_token=3)


@pytest.mark.parametrize(
    ("pad", "eos", "expected"),
    [
        (0, 2, [7, 0, 2]),
        (None, 2, [7, 2]),  # AReaL appends None here
        (None, [2, 3], [7, 2, 3]),  # multi-EOS models
        (7, 7, [7]),
    ],
)
def test_new_with_stop_and_pad_token_ids(pad, eos, expected):
    tok = SimpleNamespace(pad_token_id=pad, eos_token_id=eos)
    g = GenerationHyperparameters(stop_token_ids=[7])
    assert g.new_with_stop_and_pad_token_ids(tok).stop_token_ids == expected
    assert g.stop_token_ids == [7]


def test_stop_ids_of_skips_bools_and_none():
    assert stop_ids_of(SimpleNamespace(pad_token_id=None, eos_token_id=None)) == []
    assert stop_ids_of(SimpleNamespace()) == []


@pytest.mark.parametrize(
    ("api_format", "key"),
    [
        ("completions", "max_completion_tokens"),
        ("responses", "max_output_tokens"),
        ("openai-agents", "max_tokens"),
    ],
)
def test_to_openai_args_maps_and_drops(api_format, key):
    args = GenerationHyperparameters(max_new_tokens=64, temperature=0.3).to_openai_args_dict(
        api_format=api_format
    )
    assert args[key] == 64 and args["n"] == 1 and args["temperature"] == 0.3
    for dropped in ("top_k", "greedy", "stop_token_ids", "min_new_tokens", "lora_name"):
        assert dropped not in args
    assert "max_new_tokens" not in args and "n_samples" not in args


def test_wrappers_use_their_format():
    g = GenerationHyperparameters(max_new_tokens=8)
    assert g.to_openai_completions_args_dict()["max_completion_tokens"] == 8
    assert g.to_openai_responses_args_dict()["max_output_tokens"] == 8
    assert g.to_openai_agents_model_settings_dict()["max_tokens"] == 8
    assert "temperature" not in g.to_openai_completions_args_dict(exclude_args=["temperature"])


def test_to_openai_warns_only_for_non_default_dropped_values(caplog):
    with caplog.at_level(logging.WARNING):
        GenerationHyperparameters().to_openai_args_dict()
    assert not caplog.records
    with caplog.at_level(logging.WARNING):
        GenerationHyperparameters(top_k=5, stop_token_ids=[1]).to_openai_args_dict()
    text = caplog.text
    assert "top_k" in text and "stop_token_ids" in text


def test_unknown_api_format_is_named():
    with pytest.raises(ValueError, match="chat"):
        GenerationHyperparameters().to_openai_args_dict(api_format="chat")
