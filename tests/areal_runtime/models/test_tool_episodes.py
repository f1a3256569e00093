# SPDX-License-Identifier: Apache-2.0
"""The synthetic tool episodes the embedded model learns from, and the template it reads."""

import json
import random

from areal_runtime.experimental.openai.proxy.tool_calls import parse_tool_calls
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import (
    ARG_NAMES,
    BUNDLED,
    CLIENTS,
    SUM_NAMES,
    bundled_episode,
    chat_tool,
    handoff_tool,
    sample_episode,
)
from areal_runtime.models.train_tools import encode_packed, encode_turns, parsed_call


def test_held_out_names_never_occur_in_training():
    assert not set(SUM_NAMES["train"]) & set(SUM_NAMES["held_out"])
    held_out = set(SUM_NAMES["held_out"]) | {a for pair in ARG_NAMES["held_out"] for a in pair}
    rng = random.Random(0)
    for _ in range(2000):  # made-up names included
        call = sample_episode(rng, "train").call
        assert not ({call["name"], *call["arguments"]} & held_out), call


def test_a_packed_episode_trains_the_call_and_the_answer_only():
    """One sequence per episode: the system prompt, the tools, the question and the tool's
    result are context (label -100); the call and the answer, each with its EOS, are trained."""
    tok = tiny_tokenizer()
    rng = random.Random(0)
    for episode in [*(bundled_episode(rng, shape) for shape in BUNDLED), sample_episode(rng)]:
        ids, labels = encode_packed(tok, episode)
        (_, _), (p2, _) = encode_turns(tok, episode)
        assert ids[: len(p2)] == p2  # the second turn's prompt, as the client sends it
        trained = tok.decode([t for t in labels if t != -100])
        assert trained == f"{episode.call_text()}<|im_end|>{episode.answer}<|im_end|>"


def test_the_template_shows_each_tool_as_its_call_signature():
    tok = tiny_tokenizer()
    for client in CLIENTS:
        tools = [
            chat_tool(client, "tally", "Add two numbers.", ("u", "v")),
            handoff_tool("Billing"),
        ]
        text = tok.apply_chat_template(
            [{"role": "user", "content": "What is 2+3?"}], tools=tools, tokenize=False
        )
        assert (
            '{"description": "Add two numbers.", "name": "tally", '
            '"arguments": {"u": "number", "v": "number"}}'
        ) in text, client
        assert '"name": "transfer_to_billing", "arguments": {}}' in text


def test_an_episode_is_a_call_the_proxy_parses_then_an_answer_from_the_result():
    tok = tiny_tokenizer()
    rng = random.Random(0)
    for _ in range(20):
        episode = sample_episode(rng, "held_out")
        (_, t1), (p2, t2) = encode_turns(tok, episode)
        call_text = tok.decode(t1[:-1])  # without the closing <|im_end|>
        parsed = parse_tool_calls(call_text)
        assert not parsed.malformed and len(parsed.calls) == 1
        fn = parsed.calls[0]["function"]
        assert fn["name"] == episode.call["name"]
        assert json.loads(fn["arguments"]) == episode.call["arguments"]
        assert parsed_call(call_text) == episode.call
        # turn 2's prompt extends turn 1's conversation with the call and the tool's result
        second = tok.decode(p2)
        assert call_text in second and f"<|im_start|>tool\n{episode.result}<|im_end|>" in second
        assert tok.decode(t2, skip_special_tokens=True) == episode.answer
        assert float(episode.result) == int(episode.answer)


def test_train_tools_refuses_to_start_again_from_a_tool_trained_model(tmp_path):
    """Running the recipe twice would stack two fine-tunes; it says what to run instead."""
    import pytest
    from transformers import AutoModelForCausalLM

    from areal_runtime.models.default_model import model_config
    from areal_runtime.models.train_tools import SKILLS_KEY, load_base

    model = AutoModelForCausalLM.from_config(model_config())
    model.save_pretrained(str(tmp_path / "arithmetic"))
    assert load_base(tmp_path / "arithmetic") is not None
    setattr(model.config, SKILLS_KEY, ["arithmetic", "tools"])
    model.save_pretrained(str(tmp_path / "tools"))
    with pytest.raises(SystemExit, match="train_default"):
        load_base(tmp_path / "tools")
    assert load_base(tmp_path / "tools", resume=True) is not None  # the second stage
