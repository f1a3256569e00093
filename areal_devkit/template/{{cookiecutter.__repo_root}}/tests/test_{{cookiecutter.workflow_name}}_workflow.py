# SPDX-License-Identifier: Apache-2.0
"""Tests for {{ cookiecutter.package }}.{{ cookiecutter.workflow_name }}: offline, CPU only, scripted engine."""

import asyncio

import pytest
{%- if cookiecutter.variant != "agent_openai" %}

from areal_runtime.api.cli_args import GenerationHyperparameters
{%- endif %}
from areal_runtime.testing.workflow_checks import (
    assert_exported,
{%- if cookiecutter.variant in ("rlvr", "vision") %}
    assert_single_turn_trajectory,
{%- endif %}
    chat_prompt,
)
from {{ cookiecutter.package }}.{{ cookiecutter.workflow_name }} import {{ cookiecutter.class_name }}

ROW = {"messages": [{"role": "user", "content": "What is 2+3?"}], "answer": "5"}
{%- if cookiecutter.variant == "agent_openai" %}


def exact_match(completions, answer, **kwargs):
    return float(completions.strip() == str(answer))


@pytest.fixture
def workflow(inline_rewards):
    return {{ cookiecutter.class_name }}(reward_fn=exact_match)


def test_is_exported_and_is_an_agent():
    assert_exported("{{ cookiecutter.package }}", {{ cookiecutter.class_name }})
    assert asyncio.iscoroutinefunction({{ cookiecutter.class_name }}.run)


@pytest.mark.asyncio
@pytest.mark.parametrize(("reply", "reward"), [("5", 1.0), ("4", 0.0)])
async def test_episode_through_the_proxy(workflow, scripted_engine, run_episode, tiny_tokenizer, reply, reward):
    engine = scripted_engine([reply], logprob=-0.25, version=3)
    traj = await asyncio.wait_for(run_episode(workflow, ROW, engine=engine), 30)
    assert len(engine.requests) == 1
    request = engine.requests[0]
    assert request.input_ids == chat_prompt(tiny_tokenizer, ROW["messages"])
    assert tiny_tokenizer.eos_token_id in request.gconfig.stop_token_ids
    n_prompt = len(request.input_ids)
    assert traj["input_ids"].shape[0] == 1
    assert traj["loss_mask"][0].tolist() == [0] * n_prompt + [1] * (traj["input_ids"].shape[1] - n_prompt)
    assert traj["rewards"].tolist() == [reward]


@pytest.mark.asyncio
async def test_no_completion_means_rejected(workflow, scripted_engine, run_episode):
    class Silent({{ cookiecutter.class_name }}):
        async def run(self, data, **extra_kwargs):
            return 0.0

    assert await run_episode(Silent(reward_fn=exact_match), ROW, engine=scripted_engine(["5"])) is None
{%- else %}


def exact_match(prompt, completion, prompt_ids, completion_ids, answer, **kwargs):
    return float(completion.strip() == str(answer))
{%- if cookiecutter.variant == "vision" %}


class FakeProcessor:
    """Stands in for an HF processor: text -> token ids, one 2x2 image -> pixel values."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, images, text):
        return {"input_ids": self.tokenizer.encode(text), "pixel_values": [[0.5] * 4 for _ in images]}


ROW = {**ROW, "images": ["iVBORw0KGgo="]}
{%- endif %}


@pytest.fixture
def workflow(tiny_tokenizer, inline_rewards):
    return {{ cookiecutter.class_name }}(
        reward_fn=exact_match,
        gconfig=GenerationHyperparameters(max_new_tokens=16),
        tokenizer=tiny_tokenizer,
{%- if cookiecutter.variant == "vision" %}
        processor=FakeProcessor(tiny_tokenizer),
{%- endif %}
    )


def test_is_exported():
    assert_exported("{{ cookiecutter.package }}", {{ cookiecutter.class_name }})
{%- if cookiecutter.variant in ("rlvr", "vision") %}


@pytest.mark.asyncio
@pytest.mark.parametrize(("reply", "reward"), [("5", 1.0), ("4", 0.0)])
async def test_one_episode(workflow, scripted_engine, run_episode, tiny_tokenizer, reply, reward):
    engine = scripted_engine([reply], logprob=-0.25, version=3)
    traj = await asyncio.wait_for(run_episode(workflow, ROW, engine=engine), 30)
    assert len(engine.requests) == 1
    request = engine.requests[0]
    assert request.gconfig.n_samples == 1
    assert tiny_tokenizer.eos_token_id in request.gconfig.stop_token_ids
    assert request.input_ids == chat_prompt(tiny_tokenizer, ROW["messages"])
{%- if cookiecutter.variant == "vision" %}
    assert request.image_data == ROW["images"]
    assert traj["multi_modal_input"][0]["pixel_values"].shape == (1, 4)
{%- endif %}
    assert_single_turn_trajectory(traj, request, logprob=-0.25, version=3)
    assert traj["rewards"].tolist() == [reward]


@pytest.mark.asyncio
async def test_concurrent_episodes_are_independent(workflow, scripted_engine, tiny_tokenizer):
    rows = [{**ROW, "messages": [{"role": "user", "content": f"What is {i}+1?"}], "answer": str(i + 1)} for i in range(4)]

    def reply(request):
        i = int(tiny_tokenizer.decode(request.input_ids).split("What is ")[1].split("+")[0])
        return str(i + 1) if i % 2 == 0 else "wrong"

    engine = scripted_engine(reply, latency_s=0.01)
    trajs = await asyncio.gather(*(workflow.arun_episode(engine, row) for row in rows))
    assert [t["rewards"].item() for t in trajs] == [1.0, 0.0, 1.0, 0.0]
{%- else %}


@pytest.mark.asyncio
async def test_wrong_then_right_is_discounted_and_feedback_masked(workflow, scripted_engine, run_episode, tiny_tokenizer):
    engine = scripted_engine(["4", "5"])
    traj = await asyncio.wait_for(run_episode(workflow, ROW, engine=engine), 30)
    first, second = engine.requests
    assert first.input_ids == chat_prompt(tiny_tokenizer, ROW["messages"])
    assert second.input_ids[: len(first.input_ids)] == first.input_ids  # history is a prefix
    assert tiny_tokenizer.eos_token_id in first.gconfig.stop_token_ids
    trained = traj["input_ids"][0][traj["loss_mask"][0].bool()].tolist()
    eos = tiny_tokenizer.eos_token_id
    assert trained == tiny_tokenizer.encode("4") + [eos] + tiny_tokenizer.encode("5") + [eos]
    assert traj["rewards"].tolist() == [pytest.approx(workflow.turn_discount)]
    assert traj["input_ids"].shape[0] == 1 and traj["logprobs"].shape == traj["input_ids"].shape


@pytest.mark.asyncio
async def test_max_turns_stops_a_model_that_is_always_wrong(workflow, scripted_engine, run_episode):
    engine = scripted_engine(["1"], cycle=True)
    traj = await run_episode(workflow, ROW, engine=engine)
    assert len(engine.requests) == workflow.max_turns
    assert traj["rewards"].tolist() == [0.0]


def test_bad_config_is_refused(tiny_tokenizer):
    with pytest.raises(ValueError, match="max_turns"):
        {{ cookiecutter.class_name }}(exact_match, GenerationHyperparameters(), tiny_tokenizer, max_turns=0)
    with pytest.raises(ValueError, match="turn_discount"):
        {{ cookiecutter.class_name }}(exact_match, GenerationHyperparameters(), tiny_tokenizer, turn_discount=1.5)
{%- endif %}
{%- endif %}
