# SPDX-License-Identifier: Apache-2.0
"""The consistency checks on the embedded default model: each bug class fails, correct passes."""

import asyncio
import json

import pytest
import torch

from areal_runtime import workflow_context
from areal_runtime.api import GenerationHyperparameters
from areal_runtime.engine.local import LocalEngine
from areal_runtime.engine.recording import RecordingEngine
from areal_runtime.experimental.openai.proxy import AgentProxy
from areal_runtime.models.default_model import load_sample_dataset, load_underconfident_model
from areal_runtime.testing.consistency import (
    LOGPROBS_ENGINE,
    LOGPROBS_MODEL,
    LOSS_MASK,
    PROMPT_PREFIX,
    TOKENS,
    TRAJECTORY,
    VERSIONS,
    check_trajectory,
    check_workflow,
)
from areal_runtime.workflow_context import WorkflowContext
from examples.arithmetic_rlvr import ArithmeticRLVRWorkflow

from . import consistency_workflows as flows

ROWS = load_sample_dataset()[:4]
SAMPLED = GenerationHyperparameters(max_new_tokens=12, temperature=1.0)


@pytest.fixture(scope="module")
def engine():
    torch.set_num_threads(1)
    with LocalEngine.default() as eng:
        yield eng


@pytest.fixture(scope="module")
def doubtful_engine():
    """The under-confident arithmetic model: the shipped model answers these questions with
    logprobs of about 0 at every token, and those shifted by one position, placeholders of 0.0,
    or logprobs before and after a temperature are then the same numbers."""
    torch.set_num_threads(1)
    with LocalEngine(*load_underconfident_model(), seed=0) as eng:
        yield eng


def episode(workflow, engine, row=ROWS[0], task_id=0):
    """Run one episode on a recording engine: (trajectory, what the engine sampled)."""
    recorder = RecordingEngine(engine)

    async def run():
        workflow_context.set(WorkflowContext(task_id=task_id))
        return await workflow.arun_episode(recorder, row)

    traj = asyncio.run(run())
    return traj, recorder.calls(task_id)


def check(workflow_cls, engine, row=ROWS[0], gconfig=SAMPLED, **kwargs):
    traj, calls = episode(workflow_cls(gconfig, engine.tokenizer), engine, row)
    problems = check_trajectory(traj, calls, engine.model, engine.tokenizer, **kwargs)
    return problems, calls


def only(problems, check_name):
    assert problems, "expected a problem"
    assert {p.check for p in problems} == {check_name}, [p.format() for p in problems]
    return problems[0]


def test_correct_workflows_pass_with_model_parity(engine):
    for cls in (flows.SingleTurn, flows.MultiTurn):
        for row in ROWS[:2]:
            problems, calls = check(cls, engine, row)
            assert calls and problems == [], [p.format() for p in problems]
    report = check_workflow(
        ArithmeticRLVRWorkflow(SAMPLED, engine.tokenizer), ROWS, engine, group_size=2
    )
    assert report.ok and report.checked == 4 and report.model_parity, report.format()


def test_retokenized_completion_loses_the_eos(engine):
    problems, (call,) = check(flows.RetokenizedCompletion, engine)
    problem = only(problems, TOKENS)
    assert call.output_tokens[-1] == engine.tokenizer.eos_token_id
    assert problem.position == len(call.input_tokens) + len(call.output_tokens) - 1
    assert problem.expected == "'<|im_end|>'" and problem.found == "(nothing)"
    assert "re-tokenized from text" in problem.cause and "resp.output_tokens" in problem.fix


def test_logprobs_shifted_by_one(doubtful_engine):
    engine = doubtful_engine
    problems, (call,) = check(flows.ShiftedLogprobs, engine)
    problem = only(problems, LOGPROBS_ENGINE)
    start = len(call.input_tokens)
    traj_lp = [0.0] * (start - 1) + call.output_logprobs + [0.0]
    first_bad = next(
        i for i, lp in enumerate(call.output_logprobs) if abs(traj_lp[start + i] - lp) > 1e-3
    )
    assert problem.position == start + first_bad
    assert "shifted by one" in problem.cause


def test_placeholder_logprobs(doubtful_engine):
    engine = doubtful_engine
    problem = only(check(flows.PlaceholderLogprobs, engine)[0], LOGPROBS_ENGINE)
    assert problem.cause == "logprobs are placeholders (all 0.0)"
    assert problem.fix == "use resp.output_logprobs" and problem.found == "0.0000"


def test_missing_logprobs_key_is_a_problem_not_a_traceback(engine):
    problem = only(check(flows.NoLogprobsKey, engine)[0], TRAJECTORY)
    assert "'logprobs'" in problem.message and "resp.output_logprobs" in problem.fix


def test_prompt_in_loss_mask(engine):
    problem = only(check(flows.PromptInLossMask, engine)[0], LOSS_MASK)
    assert problem.position == 0 and problem.cause == "prompt tokens in the loss mask"
    assert problem.expected.startswith("loss_mask 0 on '<|im_start|>user")


def test_rerendered_history_is_not_a_prefix(engine):
    problems, (first, second) = check(flows.RerenderedMultiTurn, engine)
    problem = only(problems, PROMPT_PREFIX)
    history = first.input_tokens + first.output_tokens
    diverge = next(i for i, (a, b) in enumerate(zip(history, second.input_tokens)) if a != b)
    assert problem.position == diverge
    assert "turn 2's prompt does not extend turn 1" in problem.cause
    assert "previous input_ids + output_tokens" in problem.fix
    assert problem.expected.startswith("'<think>")


def test_agent_built_from_chat_text_is_caught_through_the_proxy(engine):
    problems, calls = check(flows.ChatTextAgentWorkflow, engine)
    assert len(calls) == 1  # the in-process proxy's engine call was recorded for this episode
    assert "re-tokenized from text" in only(problems, TOKENS).cause


def test_agent_through_the_proxy_passes(engine):
    report = check_workflow(flows.ProxyAgent(), ROWS, engine)
    assert report.ok and report.checked == 4, report.format()


def test_stale_versions_and_model_parity(doubtful_engine):
    engine = doubtful_engine
    warm = SAMPLED.new(temperature=0.7)
    traj, calls = episode(flows.SingleTurn(warm, engine.tokenizer), engine)
    start = len(calls[0].input_tokens)
    stale = dict(traj, versions=traj["versions"].clone())
    stale["versions"][0, start:] = 7
    problem = only(check_trajectory(stale, calls, None, engine.tokenizer), VERSIONS)
    assert problem.position == start and "one value (7)" in problem.cause
    # the engine scaled by temperature; a trainer assuming raw logits disagrees
    wrong = check_trajectory(traj, calls, engine.model, engine.tokenizer, raw_logprobs=True)
    assert only(wrong, LOGPROBS_MODEL).position is not None


def test_untrained_sample_and_rejected_episode(engine):
    traj, calls = episode(flows.SingleTurn(SAMPLED, engine.tokenizer), engine)
    problems = check_trajectory(traj, calls + calls, None, engine.tokenizer)
    assert "no trajectory row contains" in only(problems, TOKENS).message
    assert check_trajectory(traj, calls + calls, None, engine.tokenizer, allow_untrained=True) == []
    report = check_workflow(flows.SingleTurn(SAMPLED, engine.tokenizer), [{"x": 1}], engine)
    assert not report.ok and report.problems[0].check == "episode"
    assert "KeyError" in report.problems[0].cause


@pytest.mark.asyncio
async def test_socket_proxy_calls_are_keyed_by_the_session_episode(engine):
    from openai import AsyncOpenAI

    recorder = RecordingEngine(engine)
    proxy = AgentProxy(recorder, engine.tokenizer, transport="socket")
    async with proxy, proxy.session(task_id=5) as session:
        client = AsyncOpenAI(**session.extra_kwargs, max_retries=0)
        await client.chat.completions.create(
            model="m", messages=ROWS[0]["messages"], max_completion_tokens=4
        )
    assert len(recorder.calls(5)) == 1 and recorder.calls(None) == []


def parse_answer(text):
    return json.loads(text)  # the user's own line the report must point at


class ParsesBadJson:
    async def arun_episode(self, engine, data):
        return {"answer": parse_answer("{not json")}


def test_episodes_rejected_the_same_way_are_one_entry_with_the_users_line(engine):
    """Found: each of 8 episodes printed a flattened traceback starting with the caret line."""
    report = check_workflow(ParsesBadJson(), [{"x": i} for i in range(3)], engine)
    text = report.format()
    assert text.count("JSONDecodeError") == 1, text  # three episodes, one entry
    assert "episodes 0-2 (3): the same problem" in text
    assert (
        f"your code at {__file__}:" in text and "in parse_answer: return json.loads(text)" in text
    )
    assert "^" not in text and "Traceback" not in text
    assert "FAIL: 3 episodes, 0 passed, 3 failed" in text


def test_a_reward_never_awaited_says_to_await_it():
    from areal_runtime.experimental.openai.proxy.agent_proxy import reward_value

    async def reward():
        return 1.0

    coroutine = reward()
    with pytest.raises(TypeError, match="never awaited: await it"):
        reward_value(coroutine, "the agent's reward")
    assert coroutine.cr_frame is None  # closed: no RuntimeWarning on top of the error


def test_tool_turns_exported_per_row_with_identical_calls_in_a_group_pass():
    """A group's samples share turn 1's prompt, and the same call re-rendered sits in each turn-2
    row's prompt: every call belongs to the row that trains it, not the first row holding it."""
    from areal_runtime.consistency.alignment import align
    from areal_runtime.consistency.masks import mask_problems
    from areal_runtime.consistency.rows import TrajRow
    from areal_runtime.engine.recording import SampledCall

    prompt, call_tokens, tool_result, answer = [1, 2, 3], [7, 8, 0], [5, 6], [9, 0]

    def sampled(order, inp, out):
        return SampledCall(
            0, order, inp, out, [-0.1] * len(out), [0] * len(out), "stop", 1.0, False, stop_ids=(0,)
        )

    def row(index, inp, out):
        return TrajRow(index, inp + out, [0] * len(inp) + [1] * len(out), None, None)

    turn2 = prompt + call_tokens + tool_result
    calls = [sampled(0, prompt, call_tokens), sampled(1, turn2, answer)] * 2
    rows = [
        row(0, turn2, answer),
        row(1, prompt, call_tokens),
        row(2, turn2, answer),
        row(3, prompt, call_tokens),
    ]
    alignment = align(rows, calls, None, 0)
    assert alignment.problems == []
    assert mask_problems(rows, alignment, None, 0) == []
    assert sorted((s.row, s.start) for s in alignment.spans) == [(0, 8), (1, 3), (2, 8), (3, 3)]


@pytest.mark.parametrize("lost", [3, 2, 1])
def test_a_row_sliced_inside_a_completion_is_named_a_cut_even_when_the_tail_is_special(
    engine, lost
):
    """AReaL's TIR slices each trajectory at ``max_length``. When the tokens it drops are special
    (``<|image_pad|><|im_end|>``), the kept text decodes like the whole completion: that is a
    cut, not a re-tokenization. Losing only the EOS is ambiguous, and the cause says both."""
    from areal_runtime.engine.recording import SampledCall

    tok = engine.tokenizer
    prompt = tok.encode("<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n")
    out = tok.encode("5", add_special_tokens=False) + tok.convert_tokens_to_ids(
        ["<|image_pad|>", "<|image_pad|>", "<|im_end|>"]
    )
    kept = len(out) - lost
    call = SampledCall(0, 0, prompt, out, [-0.1] * len(out), [0] * len(out), "stop", 1.0, False,
                       stop_ids=(tok.convert_tokens_to_ids("<|im_end|>"),))  # fmt: skip
    traj = flows.tensors(
        prompt + out[:kept],
        [0] * len(prompt) + [1] * kept,
        [0.0] * len(prompt) + [-0.1] * kept,
        [-1] * len(prompt) + [0] * kept,
    )
    problem = only(check_trajectory(traj, [call], None, tok), TOKENS)
    if lost > 1:
        assert problem.cause == "the completion is cut short in the trajectory"
        assert "max_new_tokens" in problem.fix
    else:
        assert "re-tokenized from text, or cut at a length limit" in problem.cause
