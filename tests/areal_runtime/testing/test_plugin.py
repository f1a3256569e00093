# SPDX-License-Identifier: Apache-2.0
"""The pytest plugin, exercised the way users use it: a test file run by pytest (pytester)."""

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

HEADER = """
import time
import pytest
import torch
from areal_runtime.api import ModelRequest, RolloutWorkflow
from areal_runtime.api.reward_api import AsyncRewardWrapper
from areal_runtime.models.default_model import arithmetic_reward

class Flow(RolloutWorkflow):
    def __init__(self, tokenizer, block=False):
        self.tokenizer, self.block = tokenizer, block
        self.reward = AsyncRewardWrapper(arithmetic_reward)

    async def arun_episode(self, engine, data):
        ids = self.tokenizer.apply_chat_template(data["messages"], add_generation_prompt=True,
                                                 tokenize=True, return_dict=False)
        resp = await engine.agenerate(ModelRequest(input_ids=ids, tokenizer=self.tokenizer))
        if self.block:
            time.sleep(0.3)
        text = self.tokenizer.decode(resp.output_tokens_without_stop)
        r = await self.reward("", text, ids, resp.output_tokens, answer=data["answer"])
        n = len(ids) + resp.output_len
        return {"input_ids": torch.ones(1, n, dtype=torch.int32), "rewards": torch.tensor([r])}

ROW = {"messages": [{"role": "user", "content": "What is 2+2?"}], "answer": "4"}
"""


USER_FILES = {
    "test_strict.py": """
@pytest.mark.asyncio
async def test_rlvr(scripted_engine, tiny_tokenizer, inline_rewards, run_episode):
    engine = scripted_engine(["4", "5"])
    wf = Flow(tiny_tokenizer)
    assert wf.reward.mode == "inline"
    right = await run_episode(wf, ROW, engine=engine)
    wrong = await run_episode(wf, ROW, engine=engine)
    assert right["rewards"].tolist() == [1.0] and wrong["rewards"].tolist() == [0.0]
    assert len(engine.requests) == 2

@pytest.mark.asyncio
async def test_local_engine_answers(local_engine, inline_rewards, run_episode):
    traj = await run_episode(Flow(local_engine.tokenizer), ROW, engine=local_engine)
    assert traj["rewards"].tolist() == [1.0]

@pytest.mark.asyncio
async def test_agent_through_the_proxy(scripted_engine, run_episode):
    from openai import AsyncOpenAI
    class Agent:
        async def run(self, data, **kw):
            c = AsyncOpenAI(base_url=kw["base_url"], http_client=kw["http_client"], api_key=kw["api_key"])
            r = await c.chat.completions.create(model="m", messages=data["messages"])
            return float(r.choices[0].message.content == data["answer"])
    traj = await run_episode(Agent(), ROW, engine=scripted_engine(["4"]))
    assert traj["rewards"].tolist() == [1.0]

@pytest.mark.asyncio
async def test_agent_proxy_fixture(agent_proxy):
    async with agent_proxy.session(1) as s:
        assert set(s.extra_kwargs) == {"base_url", "http_client", "api_key"}
""",
    "test_blocking.py": """
@pytest.mark.asyncio
async def test_blocking(scripted_engine, tiny_tokenizer, inline_rewards, run_episode):
    await run_episode(Flow(tiny_tokenizer, block=True), ROW, engine=scripted_engine(["4"]))

@pytest.mark.asyncio
@pytest.mark.areal_allow_stall
async def test_allowed(scripted_engine, tiny_tokenizer, inline_rewards, run_episode):
    await run_episode(Flow(tiny_tokenizer, block=True), ROW, engine=scripted_engine(["4"]))

@pytest.mark.asyncio
async def test_own_loop_check(loop_stall_check):
    time.sleep(0.3)
""",
    "test_consistency.py": """
class Exact(RolloutWorkflow):
    def __init__(self, tokenizer, train_prompt=False):
        self.tokenizer, self.train_prompt = tokenizer, train_prompt

    async def arun_episode(self, engine, data):
        from areal_runtime.api import GenerationHyperparameters
        ids = self.tokenizer.apply_chat_template(data["messages"], add_generation_prompt=True,
                                                 tokenize=True, return_dict=False)
        g = GenerationHyperparameters(max_new_tokens=8, temperature=0.7)
        resp = await engine.agenerate(ModelRequest(input_ids=ids, gconfig=g.new_with_stop_and_pad_token_ids(self.tokenizer), tokenizer=self.tokenizer))
        n_in, n_out = resp.input_len, resp.output_len
        return {
            "input_ids": torch.tensor([resp.input_tokens + resp.output_tokens]),
            "loss_mask": torch.tensor([[int(self.train_prompt)] * n_in + [1] * n_out]),
            "logprobs": torch.tensor([[0.0] * n_in + resp.output_logprobs]),
            "versions": torch.tensor([[-1] * n_in + resp.output_versions]),
            "attention_mask": torch.ones(1, n_in + n_out, dtype=torch.bool),
            "rewards": torch.tensor([0.0]),
        }

def test_passes(consistency_check, tiny_tokenizer):
    report = consistency_check(Exact(tiny_tokenizer), [ROW, ROW])
    assert report.ok and report.checked == 2 and report.model_parity

def test_fails_with_the_report(consistency_check, tiny_tokenizer):
    consistency_check(Exact(tiny_tokenizer, train_prompt=True), ROW)

@pytest.mark.asyncio
async def test_async_form(consistency_check, tiny_tokenizer):
    report = await consistency_check.areport(Exact(tiny_tokenizer, train_prompt=True), ROW)
    assert {p.check for p in report.problems} == {"loss-mask"}
    assert report.problems[0].position == 0
""",
}


def run(pytester, body, *args):
    pytester.makepyfile(test_user=HEADER + body)
    pytester.makeini(INI)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


INI = "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"


class InnerRun:
    """One pytest process over several user test files: each outer test reads its file's part
    (a process costs ~10 s here: torch, transformers and the model are imported and loaded)."""

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout

    def outcomes(self, file: str) -> Counter:
        found = re.findall(rf"^(PASSED|FAILED|ERROR) {re.escape(file)}::", self.stdout, re.M)
        return Counter(word.lower() for word in found)

    def fnmatch_lines(self, lines: list[str]) -> None:
        pytest.LineMatcher(self.stdout.splitlines()).fnmatch_lines(lines)


@pytest.fixture(scope="module")
def inner_run(tmp_path_factory) -> InnerRun:
    root = tmp_path_factory.mktemp("user_project")
    (root / "pytest.ini").write_text(INI)
    for name, body in USER_FILES.items():
        (root / name).write_text(HEADER + body)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *USER_FILES],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},  # this checkout
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some user tests fail on purpose
    return InnerRun(proc.stdout)


@pytest.mark.slow  # one pytest process over the three user files, ~15 s
def test_fixtures_work_in_strict_mode(inner_run):
    assert inner_run.outcomes("test_strict.py") == {"passed": 4}


@pytest.mark.slow  # one pytest process over the three user files, ~15 s
def test_a_blocking_workflow_fails_its_test_with_file_and_line(inner_run):
    # test_allowed passes; the loop check passes its call phase, then errors at teardown
    assert inner_run.outcomes("test_blocking.py") == {"passed": 2, "failed": 1, "error": 1}
    inner_run.fnmatch_lines(
        ["*LoopStallError*", "*test_blocking.py:* in arun_episode*", "*time.sleep(0.3)*"]
    )


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_stall_option_off(pytester):
    result = run(
        pytester,
        """
@pytest.mark.asyncio
async def test_blocking(scripted_engine, tiny_tokenizer, inline_rewards, run_episode):
    await run_episode(Flow(tiny_tokenizer, block=True), ROW, engine=scripted_engine(["4"]))
""",
        "--areal-stall=off",
    )
    result.assert_outcomes(passed=1)


def test_plugin_import_is_cheap():
    code = (
        "import sys, areal_runtime.testing.plugin\n"
        "print(sorted(m for m in ('torch', 'transformers', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # one pytest process over the three user files, ~15 s
def test_consistency_check_fixture(inner_run):
    assert inner_run.outcomes("test_consistency.py") == {"passed": 2, "failed": 1}
    inner_run.fnmatch_lines(
        [
            "*train-inference consistency check failed*",
            "*[[]loss-mask[]]*",
            "*prompt tokens in the loss mask*",
        ]
    )


def test_the_generated_tests_contract_says_how_to_fix_each_field():
    """Found: a re-tokenized completion failed with only "the completion is missing"."""
    import pytest
    import torch

    from areal_runtime.api import ModelRequest
    from areal_runtime.testing.workflow_checks import assert_single_turn_trajectory

    request = ModelRequest(input_ids=[1, 2, 3])

    def traj(ids, mask, logprobs, versions):
        return {
            "input_ids": torch.tensor([ids]),
            "loss_mask": torch.tensor([mask]),
            "logprobs": torch.tensor([logprobs]),
            "versions": torch.tensor([versions]),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.bool),
            "rewards": torch.tensor([1.0]),
        }

    good = traj([1, 2, 3, 9], [0, 0, 0, 1], [0.0, 0.0, 0.0, -0.5], [-1, -1, -1, 3])
    assert_single_turn_trajectory(good, request, logprob=-0.5, version=3)
    cases = [
        (traj([1, 2, 3], [0, 0, 0], [0.0] * 3, [-1] * 3), "resp.input_tokens + resp.output_tokens"),
        (traj([1, 2, 3, 9], [0, 0, 1, 1], [0.0, 0.0, 0.0, -0.5], [-1, -1, -1, 3]),
         "[0] * resp.input_len + [1] * resp.output_len"),
        (traj([1, 2, 3, 9], [0, 0, 0, 1], [0.0, 0.0, 0.0, -0.1], [-1, -1, -1, 3]),
         "the engine's resp.output_logprobs"),
        (traj([1, 2, 3, 9], [0, 0, 0, 1], [0.0, 0.0, 0.0, -0.5], [-1, -1, -1, -1]),
         "resp.output_versions"),
    ]  # fmt: skip
    for bad, fix in cases:
        with pytest.raises(AssertionError) as caught:
            assert_single_turn_trajectory(bad, request, logprob=-0.5, version=3)
        assert fix in str(caught.value)
