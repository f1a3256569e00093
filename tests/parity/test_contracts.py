# SPDX-License-Identifier: Apache-2.0
"""Behaviour of the mirrored API on the same inputs, in ``areal`` and in ``areal_runtime``.

A test named ``test_deliberate_*`` covers a place where the runtime fixed an AReaL bug; it
asserts both behaviours and is listed in docs/runtime.md (checked by test_differences_doc.py).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect

import pytest
import torch

from .conftest import StubTokenizer, mod
from .rewards_for_parity import add_lengths, broken, sleepy

# --- GenerationHyperparameters -------------------------------------------------------------


def test_new_copies_applies_kwargs_and_never_shares_lists(pkg: str) -> None:
    GH = mod(pkg, "api.cli_args").GenerationHyperparameters
    base = GH(stop_token_ids=[5], stop=["</s>"], max_new_tokens=7)
    fresh = base.new(temperature=0.5)
    assert fresh is not base and fresh.temperature == 0.5 and base.temperature == 1.0
    assert fresh.max_new_tokens == 7 and fresh.stop_token_ids == [5] and fresh.stop == ["</s>"]
    fresh.stop_token_ids.append(6)
    fresh.stop.append("x")
    assert base.stop_token_ids == [5] and base.stop == ["</s>"]
    with pytest.raises(TypeError):
        base.new(no_such_field=1)


def test_new_with_stop_and_pad_token_ids_appends_pad_then_eos_once(pkg: str) -> None:
    GH = mod(pkg, "api.cli_args").GenerationHyperparameters
    out = GH(stop_token_ids=[9, 2]).new_with_stop_and_pad_token_ids(StubTokenizer(2, 0))
    assert out.stop_token_ids == [9, 2, 0]


def test_deliberate_stop_ids_skip_a_missing_pad_id() -> None:
    """AReaL appends ``None`` when the tokenizer has no pad id; the runtime skips it."""
    tok = StubTokenizer(eos_token_id=2, pad_token_id=None)
    areal = mod("areal", "api.cli_args").GenerationHyperparameters()
    runtime = mod("areal_runtime", "api.cli_args").GenerationHyperparameters()
    assert areal.new_with_stop_and_pad_token_ids(tok).stop_token_ids == [None, 2]
    assert runtime.new_with_stop_and_pad_token_ids(tok).stop_token_ids == [2]


def test_deliberate_stop_ids_keep_every_eos_of_a_multi_eos_tokenizer() -> None:
    """AReaL appends the eos list itself as one stop id; the runtime appends each id."""
    tok = StubTokenizer(eos_token_id=[2, 3], pad_token_id=0)
    areal = mod("areal", "api.cli_args").GenerationHyperparameters()
    runtime = mod("areal_runtime", "api.cli_args").GenerationHyperparameters()
    assert areal.new_with_stop_and_pad_token_ids(tok).stop_token_ids == [0, [2, 3]]
    assert runtime.new_with_stop_and_pad_token_ids(tok).stop_token_ids == [0, 2, 3]


@pytest.mark.parametrize("api_format", ["completions", "responses", "openai-agents"])
def test_openai_args_are_areals(api_format: str) -> None:
    def args(pkg: str) -> dict:
        GH = mod(pkg, "api.cli_args").GenerationHyperparameters
        gconfig = GH(n_samples=2, max_new_tokens=9, top_k=5, stop=["\n"], temperature=0.3)
        return gconfig.to_openai_args_dict(
            exclude_args=["frequency_penalty"], api_format=api_format
        )

    assert args("areal_runtime") == args("areal")


# --- ModelRequest / ModelResponse ----------------------------------------------------------


def test_request_copy_is_independent(pkg: str) -> None:
    io = mod(pkg, "api.io_struct")
    req = io.ModelRequest(input_ids=[1, 2], metadata={"a": 1}, image_data=["x"])
    copy = req.copy()
    copy.input_ids.append(3)
    copy.metadata["b"] = 2
    copy.image_data.append("y")
    assert (req.input_ids, req.metadata, req.image_data) == ([1, 2], {"a": 1}, ["x"])
    assert copy.rid == req.rid and copy.gconfig is not req.gconfig


@pytest.mark.parametrize(
    ("output", "reason", "end_with_stop", "without_stop"),
    [
        ([5, 6, 2], "stop", True, [5, 6]),
        ([5, 6, 2, 0, 0], "stop", True, [5, 6]),
        ([5, 6], "length", False, [5, 6]),
        ([5, 2], "length", True, [5, 2]),
        ([5, 6], "abort", False, [5, 6]),
        ([], "stop", False, []),
    ],
)
def test_model_response_properties(pkg, output, reason, end_with_stop, without_stop) -> None:
    io = mod(pkg, "api.io_struct")
    resp = io.ModelResponse(
        input_tokens=[1, 2, 3], output_tokens=output, stop_reason=reason, tokenizer=StubTokenizer()
    )
    assert (resp.input_len, resp.output_len) == (3, len(output))
    assert resp.end_with_stop is end_with_stop
    assert resp.output_tokens_without_stop == without_stop


def test_model_response_all_stop_tokens_raise(pkg: str) -> None:
    io = mod(pkg, "api.io_struct")
    resp = io.ModelResponse(output_tokens=[2, 0], stop_reason="stop", tokenizer=StubTokenizer())
    with pytest.raises(ValueError, match="All output_tokens are EOS or PAD"):
        _ = resp.output_tokens_without_stop


def test_model_response_needs_a_tokenizer(pkg: str) -> None:
    resp = mod(pkg, "api.io_struct").ModelResponse(output_tokens=[5])
    with pytest.raises(ValueError, match="tokenizer is None"):
        _ = resp.end_with_stop


def test_deliberate_stop_string_completion_keeps_its_tokens() -> None:
    """A completion ended by a stop string has stop_reason "stop" but no EOS: AReaL raises
    (its proxy then answers HTTP 500); the runtime returns the tokens unchanged."""

    def resp(pkg: str):
        return mod(pkg, "api.io_struct").ModelResponse(
            output_tokens=[5, 6], stop_reason="stop", tokenizer=StubTokenizer()
        )

    with pytest.raises(ValueError, match="does not end with eos or pad"):
        _ = resp("areal").output_tokens_without_stop
    assert resp("areal_runtime").output_tokens_without_stop == [5, 6]


def test_deliberate_end_with_stop_sees_every_eos_of_a_multi_eos_tokenizer() -> None:
    """With ``eos_token_id=[2, 3]`` AReaL compares the last token to the list (never equal)."""

    def resp(pkg: str):
        return mod(pkg, "api.io_struct").ModelResponse(
            output_tokens=[5, 3], tokenizer=StubTokenizer(eos_token_id=[2, 3])
        )

    assert resp("areal").end_with_stop is False
    assert resp("areal_runtime").end_with_stop is True


# --- concat_padded_tensors / pad_sequences_to_tensors --------------------------------------


def trajectories() -> list[dict]:
    def one(length: int, reward: float) -> dict:
        return {
            "input_ids": torch.arange(1, length + 1, dtype=torch.int32).unsqueeze(0),
            "logprobs": torch.full((1, length), -0.5),
            "attention_mask": torch.ones(1, length, dtype=torch.bool),
            "rewards": torch.tensor([reward]),
        }

    return [one(3, 1.0), one(5, 0.0), one(1, 0.5)]


@pytest.mark.parametrize("pad_value", [0.0, -1.0])
def test_concat_padded_tensors_outputs_are_areals(pad_value: float) -> None:
    def run(pkg: str) -> dict:
        return mod(pkg, "utils.data").concat_padded_tensors(trajectories(), pad_value=pad_value)

    runtime, areal = run("areal_runtime"), run("areal")
    assert runtime.keys() == areal.keys()
    for key in areal:
        assert runtime[key].dtype == areal[key].dtype, key
        assert torch.equal(runtime[key], areal[key]), key


def test_concat_of_nothing_and_of_one(pkg: str) -> None:
    concat = mod(pkg, "utils.data").concat_padded_tensors
    assert concat([]) == {}
    (one,) = trajectories()[:1]
    assert concat([one]).keys() == one.keys()


def test_deliberate_concat_refuses_mismatched_batch_sizes() -> None:
    """A key whose batch size differs from the others: AReaL concatenates into a batch whose
    keys disagree on its size; the runtime raises naming the key."""
    bad = trajectories()[:2]
    bad[1]["rewards"] = torch.tensor([0.0, 1.0])
    areal = mod("areal", "utils.data").concat_padded_tensors(bad)
    assert areal["input_ids"].shape[0] == 2 and areal["rewards"].shape[0] == 3
    with pytest.raises(ValueError, match="rewards"):
        mod("areal_runtime", "utils.data").concat_padded_tensors(bad)


def test_pad_sequences_to_tensors_outputs_are_areals() -> None:
    def run(pkg: str) -> dict:
        rows = [
            {"input_ids": [1, 2, 3], "loss_mask": [0, 1, 1]},
            {"input_ids": [4], "loss_mask": [1]},
        ]
        return mod(pkg, "utils.data").pad_sequences_to_tensors(rows, pad_value=-7)

    runtime, areal = run("areal_runtime"), run("areal")
    assert runtime.keys() == areal.keys()
    for key in areal:
        assert runtime[key].dtype == areal[key].dtype, key
        assert torch.equal(runtime[key], areal[key]), key


def test_get_batch_size_is_areals() -> None:
    batch = mod("areal", "utils.data").concat_padded_tensors(trajectories())
    assert mod("areal_runtime", "utils.data").get_batch_size(batch) == mod(
        "areal", "utils.data"
    ).get_batch_size(batch)


# --- AsyncRewardWrapper --------------------------------------------------------------------


@pytest.mark.asyncio
async def test_reward_wrapper_passes_arguments_through(pkg: str) -> None:
    wrapper = mod(pkg, "api.reward_api").AsyncRewardWrapper(add_lengths)
    assert await wrapper("p", "c", [1, 2], [3], bonus=10) == 13.0
    assert await wrapper(prompt="p", completions="c", prompt_ids=[1], completion_ids=[]) == 1.0


@pytest.mark.asyncio
async def test_reward_wrapper_raises_after_retries_when_the_function_raises(pkg: str) -> None:
    wrapper = mod(pkg, "api.reward_api").AsyncRewardWrapper(broken, max_retries=0)
    with pytest.raises(Exception, match="no answer"):
        await wrapper("p", "c", [], [])


@pytest.mark.asyncio
async def test_deliberate_reward_timeout_raises_instead_of_scoring_zero() -> None:
    """AReaL returns 0 after a timeout, indistinguishable from a wrong answer; the runtime
    raises ``RewardTimeoutError`` unless ``fallback=`` is given."""
    areal = mod("areal", "api.reward_api").AsyncRewardWrapper(
        sleepy, timeout_seconds=0.3, max_retries=0
    )
    assert await areal("p", "c", [], []) == 0
    rt = mod("areal_runtime", "api.reward_api")
    with pytest.raises(mod("areal_runtime", "errors").RewardTimeoutError):
        await rt.AsyncRewardWrapper(sleepy, timeout_seconds=0.3, max_retries=0)("p", "c", [], [])
    fallback = rt.AsyncRewardWrapper(sleepy, timeout_seconds=0.3, max_retries=0, fallback=0.0)
    assert await fallback("p", "c", [], []) == 0.0


# --- workflow_context ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_workflow_context_scopes_and_clients(pkg: str) -> None:
    wc = mod(pkg, "infra.workflow_context")
    assert wc.get() == wc.WorkflowContext() and wc.stat_scope() == "rollout"

    async def in_eval() -> tuple[str, object]:
        wc.set(wc.WorkflowContext(is_eval=True, task_id=3))
        return wc.stat_scope(), wc.get().task_id

    assert await asyncio.create_task(in_eval()) == ("eval-rollout", 3)
    assert wc.stat_scope() == "rollout"  # the task's context did not leak
    assert await wc.get_httpx_client() is await wc.get_httpx_client()
    assert await wc.get_aiohttp_session() is await wc.get_aiohttp_session()
    # `from areal import workflow_context` is how AReaL's own workflows reach it.
    assert importlib.import_module(pkg).workflow_context.stat_scope() == "rollout"


# --- import_from_string --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("", ValueError, "Invalid module path: ''. Expected a non-empty string"),
        (None, ValueError, "Invalid module path: None."),
        ("nodots", ValueError, "Expected format 'module.path.ObjectName', got 1 part(s)."),
        ("no_such_pkg.Thing", ImportError, "Failed to import module 'no_such_pkg' from path"),
        ("os.path.nope", AttributeError, "Module 'os.path' has no attribute 'nope'."),
        ("os.path:join", AttributeError, "Module 'os' has no attribute 'path:join'."),
    ],
)
def test_import_from_string_errors_are_areals(pkg, path, error, message) -> None:
    with pytest.raises(error) as raised:
        mod(pkg, "utils.dynamic_import").import_from_string(path)
    assert type(raised.value) is error and message in str(raised.value)


def test_import_from_string_resolves(pkg: str) -> None:
    load = mod(pkg, "utils.dynamic_import").import_from_string
    assert load("os.path.join") is __import__("os").path.join
    assert load(f"{pkg}.workflow.multi_turn.MultiTurnWorkflow").__name__ == "MultiTurnWorkflow"


# --- perf_tracer ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_perf_tracer_scopes_keep_functions_and_values(pkg: str) -> None:
    pt = mod(pkg, "utils.perf_tracer")

    class Flow:
        @pt.trace_session("reward")
        async def reward(self, x: int) -> int:
            return x + 1

        @pt.session_context()
        async def collect(self, x: int) -> int:
            async with pt.atrace_session_phase("generate"):
                y = x * 2
            with pt.trace_session_phase("post"), pt.trace_scope("post"):
                pass
            async with pt.atrace_scope("inner"):
                return await self.reward(y)

        @pt.trace_perf("Flow.sync")
        def sync(self) -> str:
            return "ok"

    flow = Flow()
    assert inspect.iscoroutinefunction(Flow.reward) and inspect.iscoroutinefunction(Flow.collect)
    assert await flow.collect(3) == 7 and flow.sync() == "ok"
    assert pt.is_configured() is False
    pt.set_task_id(4)
    assert pt.get_task_id() == 4


# --- reward functions ----------------------------------------------------------------------

REWARD_CASES = [
    ("gsm8k_reward_fn", "The answer is 4", "4"),
    ("gsm8k_reward_fn", "\\boxed{\\frac{1}{2}}", "0.5"),
    ("gsm8k_reward_fn", "The answer is 5", "4"),
    ("gsm8k_reward_fn", "", "4"),
    ("gsm8k_reward_fn", "x = 3", "3"),
    ("geometry3k_reward_fn", "The angle is [ 90 ].", "90"),
    ("geometry3k_reward_fn", "first [30], then [45]", "45"),
    ("geometry3k_reward_fn", "no bracket, 1,000", "1000"),
    ("geometry3k_reward_fn", "[60]", "90"),
    ("geometry3k_reward_fn", "No answer", None),
    ("geometry3k_reward_fn", "[1/2]", "[0.5]"),
    ("clevr_count_70k_reward_fn", "I count [3]", "3"),
    ("clevr_count_70k_reward_fn", "[3] then [4]", " 4 "),
    ("clevr_count_70k_reward_fn", "3", "3"),
    ("clevr_count_70k_reward_fn", "[3]", None),
]


@pytest.mark.parametrize(("fn", "completion", "answer"), REWARD_CASES)
def test_reward_functions_score_like_areals(fn: str, completion: str, answer) -> None:
    def score(pkg: str) -> float:
        return getattr(mod(pkg, "reward"), fn)("p", completion, [], [], answer=answer)

    assert score("areal_runtime") == score("areal")


@pytest.mark.parametrize(
    ("text", "expected"), [("a [1] b [x y]", "x y"), ("n = -2.5 or 7", "7"), ("none", "")]
)
def test_geometry3k_extract_answer_is_areals(pkg: str, text: str, expected: str) -> None:
    assert mod(pkg, "reward.geometry3k").extract_answer(text) == expected


def test_deliberate_clevr_count_accepts_an_int_answer() -> None:
    """A JSON dataset stores the count as an int: AReaL calls ``answer.strip()`` and raises."""
    with pytest.raises(AttributeError):
        mod("areal", "reward").clevr_count_70k_reward_fn("p", "[3]", [], [], answer=3)
    assert mod("areal_runtime", "reward").clevr_count_70k_reward_fn("p", "[3]", [], [], 3) == 1.0


def test_math_verify_worker_rounding_is_areals(pkg: str) -> None:
    worker = mod(pkg, "reward").MathVerifyWorker()
    assert worker.verify("\\boxed{0.0666668}", "\\boxed{0.066666793}") == 1.0
    assert worker.verify("\\boxed{2.23}", "\\boxed{2.232}") == 0.0
    assert (
        mod(pkg, "reward").get_math_verify_worker() is mod(pkg, "reward").get_math_verify_worker()
    )


# --- image2base64 --------------------------------------------------------------------------


def test_image2base64_encodes_pil_images_as_areal_does() -> None:
    from PIL import Image

    images = [Image.new("RGB", (2, 2), (255, 0, 0)), Image.new("RGBA", (3, 1))]
    runtime = mod("areal_runtime", "utils.image").image2base64(images)
    assert runtime == mod("areal", "utils.image").image2base64(images)
    assert all(s.startswith("iVBOR") for s in runtime)  # PNG


def test_deliberate_image2base64_passes_base64_strings_through() -> None:
    """A dataset that stores images already encoded: AReaL calls ``.save()`` on the string."""
    with pytest.raises(AttributeError):
        mod("areal", "utils.image").image2base64(["iVBORw0KGgo="])
    assert mod("areal_runtime", "utils.image").image2base64(["iVBORw0KGgo="]) == ["iVBORw0KGgo="]
