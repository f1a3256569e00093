# SPDX-License-Identifier: Apache-2.0
"""examples/online_agent runs as its README says: the trainer and the outside agent script as two
processes, and the sessions the agent ran (with the rewards it set) are what was trained."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "examples/online_agent"


def readme_commands() -> tuple[list[str], list[str]]:
    """The README's two commands (trainer, agent), split into arguments."""
    text = (ROOT / EXAMPLE / "README.md").read_text(encoding="utf-8")
    commands = [line.split() for line in text.splitlines() if line.startswith("python ")]
    (trainer,) = [c for c in commands if c[1] == f"{EXAMPLE}/train.py"]
    (agent,) = [c for c in commands if c[1] == f"{EXAMPLE}/agent.py"]
    return trainer, agent


def test_the_online_example_trains_on_the_sessions_its_agent_runs(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from areal_runtime.utils.stats_logger import read_stats

    trainer_cmd, agent_cmd = readme_commands()
    config = OmegaConf.load(ROOT / EXAMPLE / "config.yaml")
    per_step = config.rollout.consumer_batch_size  # resolves ${train_dataset.batch_size}
    steps = config.total_train_steps
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        # This checkout's areal_runtime, not whichever one is installed.
        "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    trainer = subprocess.Popen(
        [sys.executable, *trainer_cmd[1:], f"cluster.fileroot={tmp_path}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert trainer.stdout is not None
        for line in trainer.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    log: list[str] = []
    try:
        url = None
        deadline = time.monotonic() + 180
        while url is None and time.monotonic() < deadline:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "the trainer exited early:\n" + "".join(log)
            log.append(line)
            if match := re.search(r"Proxy gateway available at (\S+)", line):
                url = match.group(1)
        assert url, "the trainer printed no gateway address:\n" + "".join(log)
        agent_args = [url if arg.endswith(":PORT") else arg for arg in agent_cmd[1:]]
        agent = subprocess.run(
            [sys.executable, *agent_args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert agent.returncode == 0, agent.stdout + agent.stderr
        trainer.wait(timeout=300)
    finally:
        if trainer.poll() is None:
            trainer.kill()
            trainer.wait()
    while (line := lines.get(timeout=10)) is not None:
        log.append(line)
    assert trainer.returncode == 0, "".join(log)

    # The rewards the agent set, in the order its sessions ended.
    rewards = [float(r) for r in re.findall(r"reward (\S+)$", agent.stdout, flags=re.M)]
    assert len(rewards) == steps * per_step, agent.stdout
    (folder,) = tmp_path.glob("logs/*/online-agent/trial0")
    rows = read_stats(folder)
    assert [r["global_step"] for r in rows] == list(range(1, steps + 1))
    for i, row in enumerate(rows):
        assert row["accepted"] == row["ppo_actor/n_seqs"] == per_step  # sessions in this step
        batch = rewards[i * per_step : (i + 1) * per_step]
        assert row["ppo_actor/task_reward/avg"] == pytest.approx(sum(batch) / per_step), (
            rows,
            agent.stdout,
        )
        assert row["grad_norm"] > 0  # reward_bias -0.5: every session moves the weights
    ckpt = tmp_path / "checkpoints/online-agent/trial0/default"
    assert json.loads((ckpt / "trainer_state.json").read_text())["step"] == steps
