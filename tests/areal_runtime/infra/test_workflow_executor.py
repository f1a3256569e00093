# SPDX-License-Identifier: Apache-2.0
import json

import pytest

from areal_runtime.api import reward_api
from areal_runtime.infra.workflow_executor import (
    WorkflowExecutor,
    iter_dataset,
    rollout,
    run_rollout,
)
from areal_runtime.utils.data import concat_padded_tensors

from .workflows import EchoWorkflow, SleepyWorkflow


def rows(*specs):
    return [dict(spec) for spec in specs]


@pytest.mark.asyncio
async def test_accepted_batch_is_padded_in_dataset_order():
    result = await run_rollout(
        EchoWorkflow(), rows({"length": 3, "reward": 1.0}, {"length": 5, "reward": 0.0}), None
    )
    assert result.report.accepted == 2 and result.report.rejected == 0
    assert result.batch["input_ids"].shape == (2, 5)
    assert result.batch["rewards"].tolist() == [1.0, 0.0]
    assert result.report.reward_mean == 0.5 and result.report.generated_tokens == 2 + 4


@pytest.mark.asyncio
async def test_every_rejection_path_is_counted_with_its_reason():
    data = rows({"raise": 1}, {"none": 1}, {"empty": 1}, {"reward": 0.0}, {"length": 4})
    result = await run_rollout(
        EchoWorkflow(), data, None, should_accept_fn=lambda t: float(t["rewards"][0]) > 0
    )
    report = result.report
    assert report.rejected_by_reason == {"exception": 1, "none": 1, "empty": 1, "should_accept": 1}
    assert report.accepted == 1 and result.batch["input_ids"].shape == (1, 4)
    failed = result.episodes[0]
    assert not failed.accepted and "RuntimeError: boom 1" in failed.error
    assert "Traceback" in failed.error and "arun_episode" in failed.error


@pytest.mark.asyncio
async def test_validation_rejects_trajectories_that_break_the_contract():
    class Bad(EchoWorkflow):
        async def arun_episode(self, engine, data):
            traj = await super().arun_episode(engine, data)
            traj["input_ids"] = traj["input_ids"][0]
            return traj

    result = await run_rollout(Bad(), rows({}), None, validate=True)
    assert result.episodes[0].reason == "invalid"
    assert "'input_ids' must be 2-D" in result.episodes[0].error


@pytest.mark.asyncio
async def test_group_size_merges_and_one_failure_rejects_the_group():
    class FlakyInGroup(EchoWorkflow):
        calls = 0

        async def arun_episode(self, engine, data):
            type(self).calls += 1
            if data.get("fail_third") and type(self).calls == 3:
                raise ValueError("one member failed")
            return await super().arun_episode(engine, data)

    ok = await run_rollout(EchoWorkflow(), rows({"length": 4}), None, group_size=3)
    assert ok.batch["input_ids"].shape == (3, 4) and ok.batch["rewards"].shape == (3,)
    bad = await run_rollout(
        FlakyInGroup(), rows({"fail_third": 1}), None, group_size=3, concurrency=1
    )
    assert bad.report.rejected_by_reason == {"exception": 1}
    none = await run_rollout(EchoWorkflow(), rows({"none": 1}), None, group_size=2)
    assert none.episodes[0].reason == "none"


@pytest.mark.asyncio
async def test_concurrency_limit_and_context_per_episode():
    wf = EchoWorkflow(delay=0.02)
    await run_rollout(wf, rows(*[{}] * 12), None, concurrency=3, is_eval=True)
    assert wf.max_in_flight == 3
    assert sorted(s[0] for s in wf.seen) == list(range(12))
    assert all(task_id == child for task_id, _, child in wf.seen)  # gathered children inherit it
    assert all(is_eval for _, is_eval, _ in wf.seen)


@pytest.mark.asyncio
async def test_workflow_resolution_forms(tmp_path):
    for workflow, kwargs in [
        (EchoWorkflow, {"delay": 0.0}),
        ("tests.areal_runtime.infra.workflows.EchoWorkflow", None),
        ("tests.areal_runtime.infra.workflows:EchoWorkflow", None),
    ]:
        result = await run_rollout(workflow, rows({}), None, workflow_kwargs=kwargs)
        assert result.report.accepted == 1
    module = tmp_path / "my_flow.py"
    module.write_text(
        "from tests.areal_runtime.infra.workflows import EchoWorkflow\nclass Mine(EchoWorkflow):\n    pass\n"
    )
    result = await run_rollout(f"{module}:Mine", rows({}), None)
    assert result.report.accepted == 1
    with pytest.raises(TypeError, match="is not a workflow"):
        WorkflowExecutor(object(), None)
    with pytest.raises(ImportError, match="no attribute 'Nope'"):
        WorkflowExecutor("tests.areal_runtime.infra.workflows.Nope", None)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        WorkflowExecutor(str(tmp_path / "missing.py") + ":X", None)
    with pytest.raises(TypeError, match="cannot construct EchoWorkflow"):
        WorkflowExecutor(EchoWorkflow, None, workflow_kwargs={"bogus": 1})


@pytest.mark.asyncio
async def test_stall_detector_names_the_blocking_line():
    result = await run_rollout(SleepyWorkflow(), rows({}), None, stall_threshold_s=0.05)
    assert len(result.report.stalls) == 1
    stall = result.report.stalls[0]
    assert stall.culprit.filename.endswith("tests/areal_runtime/infra/workflows.py")
    assert "time.sleep(0.3)" in stall.culprit.line
    assert stall.episode == "episode 0 (SleepyWorkflow)" and stall.duration_s >= 0.2
    assert "workflows.py" in result.report.format()
    quiet = await run_rollout(SleepyWorkflow(), rows({}), None, stall_threshold_s=None)
    assert quiet.report.stalls == []


def test_datasets_from_jsonl_iterables_and_errors(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"reward": 0.5}) + "\n\n" + json.dumps({}) + "\n")
    result = rollout(EchoWorkflow(), path, None)
    assert result.report.episodes == 2 and result.report.reward_mean == 0.75
    assert rollout(EchoWorkflow(), ({} for _ in range(3)), None).report.episodes == 3
    path.write_text("{not json}\n")
    with pytest.raises(ValueError, match=r"d\.jsonl:1: not valid JSON"):
        rollout(EchoWorkflow(), path, None)
    with pytest.raises(FileNotFoundError, match="expected a JSONL file"):
        list(iter_dataset(tmp_path / "nope.jsonl"))
    with pytest.raises(TypeError, match="dataset must be"):
        iter_dataset({"a": 1})
    with pytest.raises(ValueError, match="concurrency"):
        WorkflowExecutor(EchoWorkflow(), None, concurrency=0)


@pytest.mark.asyncio
async def test_reward_timeouts_are_reported(monkeypatch):
    class TimingOut(EchoWorkflow):
        async def arun_episode(self, engine, data):
            reward_api.GLOBAL_STATS.timeouts += 1
            return await super().arun_episode(engine, data)

    result = await run_rollout(TimingOut(), rows({}, {}), None)
    assert result.report.reward_timeouts == 2
    assert "reward timeouts 2" in result.report.format()


def test_one_time_stalls_are_imports_and_first_use_pydantic_schema_builds():
    import traceback

    from areal_runtime.infra.stall_detector import StallReport

    def frames(*files):
        return [traceback.FrameSummary(f, 1, "fn") for f in files]

    user = StallReport(
        0.3, None, "episode 0", frames("/app/workflow.py", "/usr/lib/python3/socket.py")
    )
    imported = StallReport(
        0.3, None, None, frames("/app/workflow.py", "<frozen importlib._bootstrap>")
    )
    schema = StallReport(
        0.3, None, None,
        frames("/app/agent.py", "/venv/site-packages/pydantic/_internal/_generate_schema.py"),
    )  # fmt: skip
    assert [r.one_time for r in (user, imported, schema)] == [False, True, True]


def test_stalls_are_owned_by_the_workflow_the_runtime_or_a_library():
    import asyncio
    import concurrent.futures.thread
    import traceback

    from areal_runtime.infra import stall_detector
    from areal_runtime.infra.stall_detector import StallReport
    from areal_runtime.testing.episode import report_stalls

    loop_file, pool_file = asyncio.base_events.__file__, concurrent.futures.thread.__file__
    library = f"{stall_detector._LIBRARY_DIRS[0]}httpx/_client.py"
    runtime = stall_detector.__file__.replace("infra/stall_detector.py", "engine/local/engine.py")

    def report(*frames):
        return StallReport(
            0.2,
            None,
            "episode 3",
            [traceback.FrameSummary(*f[:3], line=(f[3:] or [None])[0]) for f in frames],
        )

    blocked_in_library = report(
        (loop_file, 1, "_run_once"), ("/app/flow.py", 7, "arun_episode", "requests.get(u)"),
        (library, 9, "send"),
    )  # fmt: skip
    assert blocked_in_library.owner == "workflow" and blocked_in_library.is_workflows
    assert blocked_in_library.culprit.filename == "/app/flow.py"  # the user's line, not httpx's
    text = blocked_in_library.format()
    assert "by episode 3 at /app/flow.py:7" in text and f"inside {library}:9" in text

    thread_start = report(
        ("/app/flow.py", 7, "arun_episode"), (loop_file, 2, "run_in_executor"),
        (pool_file, 199, "_adjust_thread_count"),
    )  # fmt: skip
    in_engine = report(("/app/flow.py", 7, "arun_episode"), (runtime, 5, "agenerate"))
    only_library = report((loop_file, 1, "_run_once"), (library, 9, "send"))
    tokenizer = f"{stall_detector._LIBRARY_DIRS[0]}transformers/tokenization_utils_tokenizers.py"
    proxy_tokenizes = report((loop_file, 1, "_run_once"), (runtime, 5, "chat"), (tokenizer, 9, "x"))
    assert [r.owner for r in (thread_start, in_engine, only_library, proxy_tokenizes)] == [
        "runtime", "runtime", "library", "runtime",
    ]  # fmt: skip
    assert "by the runtime, not by workflow code" in in_engine.format()
    assert "episode 3" not in thread_start.format()
    report_stalls([thread_start, in_engine, only_library], "fail")  # none is the workflow's
    with pytest.raises(Exception, match=r"/app/flow\.py:7"):
        report_stalls([blocked_in_library], "fail")


def test_a_librarys_first_tls_set_up_is_the_librarys_and_a_repeat_is_the_workflows():
    """Found: the Agents SDK building its tracing client's TLS context on the first run was
    blamed on the user's ``await Runner.run(`` line and failed ``run --fail-on-stall``."""
    import ssl
    import traceback

    from areal_runtime.infra import stall_detector
    from areal_runtime.infra.stall_detector import LoopStallDetector, StallReport

    agents = f"{stall_detector._LIBRARY_DIRS[0]}agents/run.py"
    httpcore = f"{stall_detector._LIBRARY_DIRS[0]}httpcore2/_ssl.py"
    stack = [
        traceback.FrameSummary("/app/word_problems.py", 131, "run", line="await Runner.run("),
        traceback.FrameSummary(agents, 352, "run"),
        traceback.FrameSummary(httpcore, 22, "default_ssl_context"),
        traceback.FrameSummary(ssl.__file__, 770, "create_default_context"),
    ]
    detector = LoopStallDetector(0.05)
    first, again = (StallReport(0.19, None, "episode 0", list(stack)) for _ in range(2))
    detector._record(first)
    detector._record(again)  # the same site on another episode: a client built per episode
    assert first.owner == "library" and not first.is_workflows and first.one_time
    text = first.format()
    assert "by library code (agents), not by workflow code" in text
    assert f"at {httpcore}:22 in default_ssl_context" in text and "TLS set-up" in text
    assert "word_problems.py" not in text and "aiofiles" not in text
    assert again.seen_before and again.is_workflows
    assert "build the client once" in again.format()


def test_run_exit_status_counts_only_the_workflows_stalls_and_failed_episodes():
    import argparse
    import traceback

    from areal_devkit.commands.run import exit_status
    from areal_runtime.infra.rollout_report import EpisodeRecord, RolloutReport
    from areal_runtime.infra.stall_detector import StallReport

    def report(stall_frames, reasons=()):
        records = [EpisodeRecord(0, 0, True, 0.1, reward=1.0)]
        records += [
            EpisodeRecord(i + 1, i + 1, False, 0.1, reason=r) for i, r in enumerate(reasons)
        ]
        frames = [traceback.FrameSummary(*f) for f in stall_frames]
        return RolloutReport.from_records(records, 1.0, 0, [StallReport(0.2, None, None, frames)])

    strict = argparse.Namespace(fail_on_stall=True, allow_rejected=False)
    first_import = report([("/app/flow.py", 3, "run"), ("<frozen importlib._bootstrap>", 1, "x")])
    user_sleep = report([("/app/flow.py", 3, "run")])
    assert exit_status(first_import, strict) == 0
    assert exit_status(user_sleep, strict) == 1
    dropped = report([("<frozen importlib._bootstrap>", 1, "x")], reasons=["none", "should_accept"])
    assert exit_status(dropped, strict) == 0  # the workflow dropped them on purpose
    failed = report([("<frozen importlib._bootstrap>", 1, "x")], reasons=["exception"])
    assert exit_status(failed, strict) == 1
    assert exit_status(failed, argparse.Namespace(fail_on_stall=True, allow_rejected=True)) == 0


@pytest.mark.asyncio
async def test_pool_threads_start_before_episodes():
    """The first to_thread of an episode finds a started thread (no thread start on the loop)."""
    import asyncio

    from areal_runtime.infra.stall_detector import start_pool_threads

    await start_pool_threads(4)
    pool = asyncio.get_running_loop()._default_executor
    started = len(pool._threads)
    assert started >= 4
    await asyncio.gather(*(asyncio.to_thread(len, "x") for _ in range(4)))
    assert len(pool._threads) == started  # no new thread was needed


@pytest.mark.asyncio
async def test_an_error_a_library_logs_in_an_episode_is_noted_with_what_the_model_produced(
    caplog,
):
    """Found: the Agents SDK's bare "Error getting response" (model data redacted) on stderr,
    with no episode and no hint that the reply was cut off inside a tool call."""
    import logging

    import torch

    from areal_runtime.models.tokenizers import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    prompt = tokenizer.encode("What is 2+3?")
    reply = tokenizer.encode('<tool_call>{"name": "add", "argu')

    class CutOff:
        async def arun_episode(self, engine, data):
            if data["fail"]:
                logging.getLogger("agents.sdk").error("Error getting response")
            ids = prompt + reply
            return {
                "input_ids": torch.tensor([ids]),
                "loss_mask": torch.tensor([[0] * len(prompt) + [1] * len(reply)]),
                "attention_mask": torch.ones(1, len(ids), dtype=torch.bool),
                "rewards": torch.tensor([0.0]),
            }

    result = await run_rollout(CutOff(), rows({"fail": 1}, {"fail": 0}), None, tokenizer=tokenizer)
    failed, fine = result.episodes
    assert failed.notes == [
        "agents.sdk logged ERROR: Error getting response",
        "the model's last reply (cut off at the token limit): "
        + repr('<tool_call>{"name": "add", "argu'),
    ]
    assert fine.notes == []
    assert [r.getMessage() for r in caplog.records] == ["Error getting response"]  # still logged
    assert not any(type(h).__name__ == "EpisodeLogNotes" for h in logging.getLogger().handlers)


@pytest.mark.asyncio
async def test_a_groups_reward_is_the_mean_over_its_episodes_not_its_rows():
    """An agent's episode gives a row a turn: one that called a tool and got it right trains two
    rows, one that answered at once and wrong trains one. Over rows that group's reward read
    2/3; over episodes it is 1/2, as ``run`` reports an episode."""
    from areal_runtime.trainer.loop import episode_rewards

    from .workflows import trajectory

    class TwoTurnsOrOne(EchoWorkflow):
        calls = 0

        async def arun_episode(self, engine, data):
            type(self).calls += 1
            if type(self).calls % 2:
                return concat_padded_tensors([trajectory(reward=1.0), trajectory(reward=1.0)])
            return trajectory(reward=0.0)

    result = await run_rollout(TwoTurnsOrOne(), rows({}), None, group_size=2, concurrency=1)
    record = result.episodes[0]
    assert record.trajectory["rewards"].tolist() == [1.0, 1.0, 0.0]
    assert record.episode_rewards == [1.0, 0.0] and record.reward == 0.5
    assert episode_rewards([record, record]) == ([1.0, 0.0, 1.0, 0.0], 6)
