# SPDX-License-Identifier: Apache-2.0
"""``ArealOpenAI``: AReaL's per-episode client, driven like AReaL's agent examples drive it."""

import subprocess
import sys

import openai
import pytest

from areal_runtime.api import RolloutWorkflow
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.experimental.openai import ArealOpenAI
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.utils.data import concat_padded_tensors

QUESTION = [{"role": "user", "content": "What is 2+2?"}]


class MultiTurnMathAgent(RolloutWorkflow):
    """The shape of AReaL's multi-turn math example: retry until right, discounted rewards."""

    def __init__(self, tokenizer, max_turns=3, turn_discount=0.5):
        self.tokenizer = tokenizer
        self.max_turns = max_turns
        self.turn_discount = turn_discount

    async def arun_episode(self, engine, data):
        client = ArealOpenAI(engine=engine, tokenizer=self.tokenizer)
        messages = list(data["messages"])
        for _ in range(self.max_turns):
            completion = await client.chat.completions.create(
                model="default", messages=messages, temperature=1.0
            )
            answer = completion.choices[0].message.content
            correct = answer.strip() == data["answer"]
            client.set_reward(completion.id, float(correct))
            if correct:
                break
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": "Wrong, try again."},
            ]
        client.apply_reward_discount(turn_discount=self.turn_discount)
        interactions = client.export_interactions(style="individual")
        return concat_padded_tensors([i.to_tensor_dict() for i in interactions.values()])


@pytest.fixture
def tok():
    return tiny_tokenizer()


@pytest.mark.asyncio
async def test_multi_turn_agent_records_every_turn_with_discounted_rewards(tok):
    engine = ScriptedEngine(["5", "3", "4"], tokenizer=tok, logprob=-0.5)
    batch = await MultiTurnMathAgent(tok).arun_episode(
        engine, {"messages": QUESTION, "answer": "4"}
    )
    assert batch["rewards"].tolist() == [0.25, 0.5, 1.0]  # 1.0 discounted back by 0.5 a turn
    assert len(engine.requests) == 3
    # The third prompt carries the whole conversation so far.
    third = tok.decode(engine.requests[2].input_ids)
    assert third.count("Wrong, try again.") == 2 and "5" in third and "3" in third
    for row, request in enumerate(engine.requests):
        n_prompt = len(request.input_ids)
        assert batch["input_ids"][row, :n_prompt].tolist() == request.input_ids
        assert batch["loss_mask"][row, :n_prompt].sum() == 0
        assert batch["loss_mask"][row, n_prompt:].sum() == 2  # the answer and its <|im_end|>


@pytest.mark.asyncio
async def test_rewards_lookup_and_errors_name_the_problem(tok):
    client = ArealOpenAI(engine=ScriptedEngine(["4"], tokenizer=tok), tokenizer=tok)
    with pytest.raises(ValueError, match="no chat completion"):
        client.set_last_reward(1.0)
    completion = await client.chat.completions.create(model="m", messages=QUESTION)
    assert client.get_interaction(completion.id).output_message_list[0]["content"] == "4"
    assert client.get_interaction("chatcmpl-nope") is None
    with pytest.raises(KeyError, match="no completion 'chatcmpl-nope'"):
        client.set_reward("chatcmpl-nope", 1.0)
    with pytest.raises(TypeError, match="must be a number"):
        client.set_last_reward("1.0")
    client.set_last_reward(1)
    assert client.export_interactions("individual")[completion.id].reward == 1.0
    with pytest.raises(ValueError, match="unknown export style 'leaves'"):
        client.export_interactions("leaves")


@pytest.mark.asyncio
async def test_bad_request_is_an_openai_error_and_not_retried(tok):
    engine = ScriptedEngine(["4"], tokenizer=tok)
    client = ArealOpenAI(engine=engine, tokenizer=tok)
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(model="m", messages=[])
    assert engine.requests == []


@pytest.mark.asyncio
async def test_concat_export_returns_the_leaf_of_the_conversation(tok):
    engine = ScriptedEngine(["5", "4"], tokenizer=tok)
    client = ArealOpenAI(engine=engine, tokenizer=tok, chat_template_type="concat")
    first = await client.chat.completions.create(model="m", messages=QUESTION)
    follow_up = [
        *QUESTION,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "Sure?"},
    ]
    second = await client.chat.completions.create(model="m", messages=follow_up)
    client.set_last_reward(1.0)
    leaves = client.export_interactions("concat")
    assert list(leaves) == [second.id]
    # The second prompt extends the first one's tokens exactly (no re-tokenization).
    first_tokens = engine.requests[0].input_ids
    assert engine.requests[1].input_ids[: len(first_tokens)] == first_tokens


def test_importing_the_package_does_not_load_the_client():
    code = (
        "import sys, areal_runtime.experimental.openai as m; "
        "assert 'openai' not in sys.modules and 'starlette' not in sys.modules; "
        "assert m.ArealOpenAI.__name__ == 'ArealOpenAI'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.asyncio
async def test_a_model_that_stops_at_once_gives_an_empty_answer(tok):
    engine = ScriptedEngine([""], tokenizer=tok)
    client = ArealOpenAI(engine=engine, tokenizer=tok)
    completion = await client.chat.completions.create(messages=QUESTION)  # no model=, as in AReaL
    assert completion.choices[0].message.content == ""
    assert completion.choices[0].finish_reason == "stop"
    client.set_last_reward(0.0)
    (interaction,) = client.export_interactions("individual").values()
    assert interaction.to_tensor_dict()["loss_mask"].sum() == 1  # the EOS is still trained on


@pytest.mark.asyncio
async def test_token_limits_cap_prompt_plus_completion_as_in_areal(tok):
    engine = ScriptedEngine(["4"] * 4, tokenizer=tok)
    client = ArealOpenAI(engine=engine, tokenizer=tok, engine_max_tokens=100)
    await client.chat.completions.create(messages=QUESTION, max_completion_tokens=500)
    prompt_len = len(engine.requests[0].input_ids)
    assert engine.requests[0].gconfig.max_new_tokens == 100 - prompt_len
    await client.chat.completions.create(
        messages=QUESTION, extra_body={"max_total_tokens": prompt_len + 7, "top_k": 5}
    )
    assert engine.requests[1].gconfig.max_new_tokens == 7
    assert engine.requests[1].gconfig.top_k == 5
    with pytest.raises(openai.BadRequestError, match=f"prompt has {prompt_len} tokens"):
        await client.chat.completions.create(
            messages=QUESTION, extra_body={"max_total_tokens": prompt_len}
        )
    with pytest.raises(openai.BadRequestError, match="presence_penalty is not supported"):
        await client.chat.completions.create(messages=QUESTION, presence_penalty=0.5)
    await client.chat.completions.create(messages=QUESTION, presence_penalty=0.0)
    assert len(engine.requests) == 3  # refused requests never reach the engine


@pytest.mark.asyncio
async def test_responses_create_is_recorded_and_rewarded_like_a_completion(tok):
    call = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    engine = ScriptedEngine([call, "5"], tokenizer=tok, logprob=-0.4)
    client = ArealOpenAI(engine=engine, tokenizer=tok)
    tool = {"type": "function", "name": "add", "parameters": {"type": "object"}}
    first = await client.responses.create(input="What is 2+3?", tools=[tool])
    assert first.output[0].type == "function_call" and first.output[0].name == "add"
    second = await client.responses.create(
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": first.output[0].call_id, "output": "5"}],
    )
    assert second.output_text == "5"
    client.set_reward(second.id, 1.0)
    client.apply_reward_discount(0.5)
    exported = client.export_interactions("individual")
    assert list(exported) == [first.id, second.id]
    assert [exported[i].reward for i in exported] == [0.5, 1.0]
    assert second.usage.input_tokens == len(engine.requests[1].input_ids)
