# SPDX-License-Identifier: Apache-2.0
"""Recovery: a SIGKILLed run resumes from its last recover checkpoint; torn dumps are never read."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from areal_runtime.api.cli_args import GRPOConfig, OptimizerConfig, RecoverConfig
from areal_runtime.api.io_struct import FinetuneSpec, SaveLoadMeta, StepInfo
from areal_runtime.trainer.data_cursor import DataCursor
from areal_runtime.utils.recover import (
    INFO_FILE,
    RecoverHandler,
    check_if_recover,
    check_mode,
)
from areal_runtime.utils.stats_logger import read_stats

ROOT = Path(__file__).parents[3]
SCRIPT = Path(__file__).with_name("recover_run.py")


def _run(fileroot: Path, steps: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(fileroot), str(steps)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow
def test_the_ported_gsm8k_script_resumes_after_sigkill(tmp_path):
    """AReaL's gsm8k_rl.py, renamed, with recover.mode=auto: killed after step 2 of 4."""
    script = ROOT / "examples/gsm8k/gsm8k_rl.py"
    argv = [
        sys.executable, str(script), "--config", "examples/gsm8k/gsm8k_grpo_laptop.yaml",
        f"cluster.fileroot={tmp_path}", "recover.mode=auto", "recover.freq_steps=1",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            files = list(tmp_path.glob("logs/*/gsm8k-grpo-laptop/trial0/stats.jsonl"))
            if files and len(read_stats(files[0])) >= 2:
                break
            assert first.poll() is None, first.stdout.read()
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    (info_file,) = tmp_path.glob(
        f"checkpoints/*/gsm8k-grpo-laptop/trial0/recover_checkpoint/{INFO_FILE}"
    )
    done = json.loads(info_file.read_text())["last_step_info"]["global_step"] + 1
    second = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"after step {done}/4" in second.stdout
    assert [r["global_step"] for r in read_stats(files[0])] == [1, 2, 3, 4]
    assert "eval after step 4:" in second.stdout  # freq_epochs: 1, at the end of the epoch


def _recover_folder(fileroot: Path) -> Path:
    (folder,) = fileroot.glob("checkpoints/*/recover-test/t0/recover_checkpoint")
    return folder


@pytest.mark.slow
def test_a_sigkilled_run_resumes_from_its_last_recover_checkpoint(tmp_path):
    steps = 8
    first = _run(tmp_path, steps)
    stats = None
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            files = list(tmp_path.glob("logs/*/recover-test/t0/stats.jsonl"))
            if files and len(read_stats(files[0])) >= 4:
                stats = files[0]
                break
            assert first.poll() is None, first.stdout.read()
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)  # mid-training: possibly mid-dump, mid-write
        first.wait()
    assert stats is not None, "the first run did not reach step 4"
    info = json.loads((_recover_folder(tmp_path) / INFO_FILE).read_text())
    killed_after = info["last_step_info"]["global_step"] + 1
    assert 3 <= killed_after < steps

    second = _run(tmp_path, steps)
    out, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out
    assert f"after step {killed_after}/{steps}" in out, out
    # The resumed run trained only the remaining steps, and the file reads as one run.
    printed = [line.split()[0] for line in out.splitlines() if "/8 " in line[:12]]
    assert printed == [f"{s}/{steps}" for s in range(killed_after + 1, steps + 1)], out
    rows = read_stats(stats)
    assert [r["global_step"] for r in rows] == list(range(1, steps + 1))
    # The optimizer continued: its step count is that of 8 updates of 2 minibatches, not of a
    # fresh optimizer that saw only the steps after the kill.
    state = torch.load(_recover_folder(tmp_path) / "training_state.pt", weights_only=False)
    assert {int(s["step"]) for s in state["optimizer"]["state"].values()} == {steps * 2}
    assert state["scheduler"]["last_epoch"] == steps * 2


class _FakeEngine:
    """A train engine as RecoverHandler sees it: ``save(meta)`` / ``load(meta)``."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.loaded: list[SaveLoadMeta] = []

    def save(self, meta: SaveLoadMeta) -> None:
        (Path(meta.path) / "model.safetensors").write_bytes(b"weights")
        if self.fail:
            raise KeyboardInterrupt  # the process dies in the middle of a dump

    def load(self, meta: SaveLoadMeta) -> None:
        self.loaded.append(meta)


class _State:
    """A saver / evaluator / stats logger / data loader: ``state_dict`` and back."""

    def __init__(self, state: dict | None = None) -> None:
        self.state = dict(state or {})

    def state_dict(self) -> dict:
        return dict(self.state)

    def load_state_dict(self, state: dict) -> None:
        self.state = dict(state)


def _handler(tmp_path: Path, mode: str = "on", batch_size: int = 4) -> RecoverHandler:
    spec = FinetuneSpec(total_train_epochs=1, dataset_size=40, train_batch_size=batch_size)
    config = RecoverConfig(
        experiment_name="e", trial_name="t", fileroot=str(tmp_path), mode=mode, freq_steps=1
    )
    return RecoverHandler(config, spec)


def _dump(handler: RecoverHandler, step: int, engine: _FakeEngine | None = None) -> None:
    spe = handler.ft_spec.steps_per_epoch
    handler.dump(
        engine or _FakeEngine(),
        StepInfo(epoch=0, epoch_step=step % spe, global_step=step, steps_per_epoch=spe),
        _State(),
        _State(),
        _State({"last_commit_step": step}),
        _State({"cursor": step}),
    )


def _load(handler: RecoverHandler, engine: _FakeEngine | None = None):
    stats, data = _State(), _State()
    info = handler.load(engine or _FakeEngine(), _State(), _State(), stats, data)
    return info, stats, data


def test_a_dump_killed_midway_leaves_the_previous_checkpoint_in_use(tmp_path):
    handler = _handler(tmp_path)
    _dump(handler, 2)
    with pytest.raises(KeyboardInterrupt):
        _dump(handler, 5, _FakeEngine(fail=True))
    engine = _FakeEngine()
    info, stats, data = _load(_handler(tmp_path), engine)
    assert info.last_step_info.global_step == 2
    assert stats.state == {"last_commit_step": 2} and data.state == {"cursor": 2}
    assert [m.path for m in engine.loaded] == [str(handler.folder)]


def test_a_kill_between_the_two_renames_recovers_the_previous_checkpoint(tmp_path):
    handler = _handler(tmp_path)
    _dump(handler, 3)
    # The moment after `target -> .old` and before `.tmp -> target`.
    old = handler.folder.parent / f".{handler.folder.name}.old-12345"
    handler.folder.rename(old)
    assert check_if_recover(handler.config, 0)
    engine = _FakeEngine()
    info, _, _ = _load(_handler(tmp_path), engine)
    assert info.last_step_info.global_step == 3 and engine.loaded[0].path == str(old)


def test_an_incomplete_info_file_is_not_read_back(tmp_path):
    handler = _handler(tmp_path)
    _dump(handler, 3)
    info_file = handler.folder / INFO_FILE
    info_file.write_text(info_file.read_text()[:40])  # torn
    assert _load(_handler(tmp_path))[0] is None
    assert not check_if_recover(handler.config, 0)


def test_modes_as_in_areal(tmp_path):
    assert check_mode("auto") and check_mode("on")
    assert not check_mode("disabled") and not check_mode("off")
    with pytest.raises(ValueError, match="'on' or 'auto'"):
        RecoverConfig(mode="resume")
    handler = _handler(tmp_path, mode="disabled")
    _dump(handler, 0)
    assert _load(handler)[0] is None and not list(tmp_path.iterdir())
    from areal_runtime.api.cli_args import load_expr_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text("recover:\n  mode: fault\n")
    with pytest.raises(ValueError, match=r"recover.*'fault'"):
        load_expr_config(["--config", str(cfg)], GRPOConfig)


def test_a_checkpoint_from_a_different_dataset_is_refused(tmp_path):
    _dump(_handler(tmp_path), 1)
    with pytest.raises(ValueError, match="steps per epoch"):
        _load(_handler(tmp_path, batch_size=8))


def test_the_data_cursor_resumes_the_uninterrupted_order():
    straight = DataCursor(10, shuffle=True, seed=7)
    drawn = [straight.draw(i) for i in range(25)]
    # Interrupted run: episodes 0..11 drawn; 0..7 trained, 8..11 still in flight at the dump.
    before = DataCursor(10, shuffle=True, seed=7)
    for i in range(12):
        before.draw(i)
    for i in range(8):
        before.done(i)
    state = json.loads(json.dumps(before.state_dict()))  # it goes through JSON
    after = DataCursor(10, shuffle=True, seed=7)
    after.load_state_dict(state)
    resumed = drawn[:8] + [after.draw(100 + i) for i in range(17)]
    assert resumed == drawn
    with pytest.raises(ValueError, match="dataset changed"):
        DataCursor(5, shuffle=True, seed=7).load_state_dict(state)


def test_training_state_round_trip_restores_the_optimizer(tmp_path):
    from areal_runtime.models.default_model import load_underconfident_model
    from areal_runtime.trainer.learner import Learner

    torch.set_num_threads(1)
    model, _ = load_underconfident_model()
    config = GRPOConfig()
    config.actor.optimizer = OptimizerConfig()
    learner = Learner(model, config, total_steps=10)
    loss = sum(p.sum() for p in model.parameters())
    loss.backward()
    learner.optimizer.step()
    learner.scheduler.step()
    torch.save(learner.training_state(), tmp_path / "s.pt")
    fresh_model, _ = load_underconfident_model()
    fresh = Learner(fresh_model, config, total_steps=10)
    fresh.load_training_state(torch.load(tmp_path / "s.pt", weights_only=False))
    a, b = learner.optimizer.state_dict(), fresh.optimizer.state_dict()
    assert a["state"].keys() == b["state"].keys()
    for key, value in a["state"].items():
        assert torch.equal(value["exp_avg"], b["state"][key]["exp_avg"])
        assert int(value["step"]) == int(b["state"][key]["step"]) == 1
    assert fresh.scheduler.last_epoch == learner.scheduler.last_epoch == 1
