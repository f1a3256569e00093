# SPDX-License-Identifier: Apache-2.0
"""The stats logger: AReaL's log folder, JSONL always, TensorBoard, wandb/swanlab when enabled."""

import io
import json
import sys
import types
from pathlib import Path

import pytest

from areal_runtime.api.cli_args import GRPOConfig
from areal_runtime.api.io_struct import FinetuneSpec
from areal_runtime.utils.stats_logger import StatsLogger, log_dir, read_stats
from areal_runtime.utils.timeutil import EpochStepTimeFreqCtl

SPEC = FinetuneSpec(total_train_epochs=2, dataset_size=8, train_batch_size=2)


def config(tmp_path: Path, **sections) -> GRPOConfig:
    c = GRPOConfig(experiment_name="exp", trial_name="t1")
    c.stats_logger.experiment_name, c.stats_logger.trial_name = "exp", "t1"
    c.stats_logger.fileroot = str(tmp_path)
    for name, value in sections.items():
        setattr(c.stats_logger, name, value)
    return c


def test_rows_go_to_areal_log_folder_and_print_compactly(tmp_path):
    out = io.StringIO()
    logger = StatsLogger(config(tmp_path), SPEC, console=out)
    for step in range(3):
        logger.commit(0, step, step, {"ppo_actor/task_reward/avg": 0.25 * step, "x__count": 4})
    logger.close()
    folder = log_dir(str(tmp_path), "exp", "t1")
    assert folder.parent.parent.parent == tmp_path / "logs"  # {fileroot}/logs/{user}/exp/t1
    rows = read_stats(folder)
    assert [r["global_step"] for r in rows] == [1, 2, 3]
    assert [r["ppo_actor/task_reward/avg"] for r in rows] == [0.0, 0.25, 0.5]
    assert all("x__count" not in r for r in rows)
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:3] == ["step", "epoch", "reward"]
    assert lines[3].split()[:3] == ["3/8", "1/2", "0.500"]
    assert len(lines) == 4  # one header, one row per step: compact


def test_tensorboard_event_files_are_written(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logger = StatsLogger(config(tmp_path), SPEC, console=False)
    logger.commit(0, 0, 0, {"ppo_actor/task_reward/avg": 0.5})
    logger.commit(0, 1, 1, {"ppo_actor/task_reward/avg": 0.75})
    logger.close()
    events = EventAccumulator(str(log_dir(str(tmp_path), "exp", "t1") / "tensorboard"))
    events.Reload()
    values = [e.value for e in events.Scalars("ppo_actor/task_reward/avg")]
    assert values == [0.5, 0.75]


def _fake_tracker(name: str, calls: list) -> types.ModuleType:
    module = types.ModuleType(name)
    module.init = lambda **kw: calls.append(("init", kw))
    module.log = lambda data, step: calls.append(("log", dict(data), step))
    module.finish = lambda: calls.append(("finish",))
    return module


@pytest.mark.parametrize("name", ["wandb", "swanlab"])
def test_wandb_and_swanlab_receive_every_step_when_enabled(tmp_path, monkeypatch, name):
    calls: list = []
    monkeypatch.setitem(sys.modules, name, _fake_tracker(name, calls))
    logger = StatsLogger(
        config(tmp_path, **{name: {"mode": "offline", "project": "proj"}}), SPEC, console=False
    )
    logger.commit(0, 0, 0, {"a": 1.0, "note": "text is not logged"})
    logger.close()
    assert calls[0][0] == "init" and calls[0][1]["project"] == "proj"
    assert calls[0][1]["mode"] == "offline"
    assert calls[1] == ("log", {"a": 1.0}, 0)
    assert calls[-1] == ("finish",)


def test_disabled_trackers_are_not_touched(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setitem(sys.modules, "wandb", _fake_tracker("wandb", calls))
    StatsLogger(config(tmp_path), SPEC, console=False).close()  # wandb.mode: disabled
    assert calls == []


def test_an_enabled_tracker_that_is_not_installed_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "swanlab", None)  # import fails
    with pytest.raises(ValueError, match=r"pip install swanlab.*mode=disabled"):
        StatsLogger(config(tmp_path, swanlab={"mode": "cloud"}), SPEC, console=False)


def test_a_recovered_run_cuts_rows_after_the_recovered_step(tmp_path):
    logger = StatsLogger(config(tmp_path), SPEC, console=False)
    for step in range(5):
        logger.commit(0, step, step, {"v": float(step)})
    logger._file.write('{"global_step": 6, "v": ')  # a torn line from a kill
    logger._file.flush()
    resumed = StatsLogger(config(tmp_path), SPEC, console=False)
    resumed.load_state_dict({"last_commit_step": 2})  # recovered after step 3
    resumed.commit(0, 3, 3, {"v": 30.0})
    resumed.close()
    rows = read_stats(log_dir(str(tmp_path), "exp", "t1"))
    assert [(r["global_step"], r["v"]) for r in rows] == [(1, 0), (2, 1), (3, 2), (4, 30.0)]


def test_a_new_run_starts_a_new_file(tmp_path):
    for _ in range(2):
        logger = StatsLogger(config(tmp_path), SPEC, console=False)
        logger.commit(0, 0, 0, {"v": 1.0})
        logger.close()
    assert len(read_stats(log_dir(str(tmp_path), "exp", "t1"))) == 1


def test_frequencies_as_areal():
    every_two_steps = EpochStepTimeFreqCtl(freq_step=2)
    assert [every_two_steps.check(epochs=0, steps=1) for _ in range(5)] == [
        False, True, False, True, False,
    ]  # fmt: skip
    each_epoch = EpochStepTimeFreqCtl(freq_epoch=1)
    ends = [0, 0, 1, 0, 0, 1]
    assert [each_epoch.check(epochs=e, steps=1) for e in ends] == [bool(e) for e in ends]
    before = EpochStepTimeFreqCtl(freq_epoch=1, initial_epoch_value=True)
    assert before.check(epochs=0, steps=1)  # eval_before_train: the first check fires
    resumed = EpochStepTimeFreqCtl(freq_step=2)
    resumed.load_state_dict(json.loads(json.dumps(every_two_steps.state_dict())))
    assert resumed.check(epochs=0, steps=1)  # step 6: due, as in the uninterrupted run
    with pytest.raises(ValueError, match="freq_steps must be >= 1"):
        EpochStepTimeFreqCtl(freq_step=0)


def test_an_unwritable_fileroot_names_the_setting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the fileroot's folders should go
    c = config(tmp_path)
    c.stats_logger.fileroot = str(blocker)
    with pytest.raises(ValueError, match=r"cluster\.fileroot"):
        StatsLogger(c, SPEC, console=False)
