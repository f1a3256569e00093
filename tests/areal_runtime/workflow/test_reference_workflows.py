# SPDX-License-Identifier: Apache-2.0
"""The runtime's copies of AReaL's reference workflows, on the scripted engine."""

import pytest

from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.utils import stats_tracker
from areal_runtime.utils.data import validate_trajectory
from areal_runtime.workflow import MultiTurnWorkflow, RLVRWorkflow


def exact_answer(prompt, completions, prompt_ids, completion_ids, answer, **_):
    return float(f" {answer}" in completions)


def row(answer="4"):
    return {"messages": [{"role": "user", "content": "What is 2+2?"}], "answer": answer}


@pytest.mark.asyncio
async def test_rlvr_scores_one_completion_and_masks_the_prompt(
    scripted_engine, tiny_tokenizer, inline_rewards, run_episode
):
    engine = scripted_engine(["so 4"])
    workflow = RLVRWorkflow(
        exact_answer, GenerationHyperparameters(max_new_tokens=8), tiny_tokenizer
    )
    traj = await run_episode(workflow, row(), engine=engine)
    validate_trajectory(traj, batch_size=1)
    assert traj["rewards"].tolist() == [1.0]
    request = engine.requests[0]
    prompt_len = len(request.input_ids)
    assert traj["loss_mask"][0, :prompt_len].sum() == 0 and traj["loss_mask"][0, prompt_len:].all()
    assert tiny_tokenizer.eos_token_id in request.gconfig.stop_token_ids


@pytest.mark.asyncio
async def test_rlvr_imports_string_hooks_and_reward(
    scripted_engine, tiny_tokenizer, inline_rewards
):
    workflow = RLVRWorkflow(
        "areal_runtime.reward.gsm8k.gsm8k_reward_fn",
        GenerationHyperparameters(max_new_tokens=8),
        tiny_tokenizer,
        data_extract_prompt_fn="tests.areal_runtime.workflow.hooks.prompt_of",
    )
    assert not hasattr(workflow, "async_reward_fn")  # a string reward is imported per process
    traj = await workflow.arun_episode(scripted_engine(["4"]), {"question": "2+2?", "answer": "4"})
    assert traj["rewards"].tolist() == [1.0]


@pytest.mark.asyncio
async def test_multi_turn_retries_with_the_fixed_prompt_and_discounts(
    scripted_engine, tiny_tokenizer, inline_rewards
):
    stats_tracker.reset_all()
    engine = scripted_engine(["so 5", "so 4"])
    workflow = MultiTurnWorkflow(
        exact_answer, GenerationHyperparameters(max_new_tokens=8), tiny_tokenizer, 3, 0.5
    )
    traj = await workflow.arun_episode(engine, row())
    assert traj["rewards"].tolist() == [0.5]
    first, second = engine.requests
    assert (
        second.input_ids[-len(workflow.multi_turn_prompt_ids) :] == workflow.multi_turn_prompt_ids
    )
    assert second.input_ids[: len(first.input_ids)] == first.input_ids
    assert stats_tracker.get("rollout").values("num_turns") == [2]


@pytest.mark.parametrize(("max_turns", "discount"), [(0, 0.5), (2, 0.0), (2, 1.5)])
def test_multi_turn_rejects_bad_settings(tiny_tokenizer, max_turns, discount):
    with pytest.raises(ValueError):
        MultiTurnWorkflow(
            exact_answer, GenerationHyperparameters(), tiny_tokenizer, max_turns, discount
        )
