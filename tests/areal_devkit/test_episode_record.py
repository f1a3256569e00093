# SPDX-License-Identifier: Apache-2.0
"""One trajectory-JSONL schema: what run, train and serve write is what view reads."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from areal_devkit.commands.run import episode_record
from areal_devkit.episode_record import EpisodeRecord, read_episodes, write_episodes
from areal_devkit.errors import UsageError
from areal_devkit.viewer import episodes_from_file

TRAJ = {
    "input_ids": torch.tensor([[5, 6, 7, 0]]),
    "attention_mask": torch.tensor([[1, 1, 1, 0]]),
    "loss_mask": torch.tensor([[0, 1, 1, 0]]),
    "logprobs": torch.tensor([[0.0, -0.5, -0.25, 0.0]]),
    "versions": torch.tensor([[-1, 3, 3, -1]]),
    "rewards": torch.tensor([1.0]),
}


def rollout_episode(index: int, accepted: bool) -> SimpleNamespace:
    """What ``RolloutResult.episodes`` holds."""
    return SimpleNamespace(
        index=index,
        accepted=accepted,
        reward=1.0 if accepted else None,
        reason=None if accepted else "reward_fn raised",
        error=None if accepted else "ValueError: bad",
        trajectory=TRAJ if accepted else None,
    )


def test_what_run_train_and_serve_write_reads_back_whole(tmp_path: Path) -> None:
    served = EpisodeRecord(
        episode=2,
        accepted=True,
        reward=None,
        tensors={k: v.tolist() for k, v in TRAJ.items()},
        session_id="serve-0",
        completion_ids=["chatcmpl-1"],
    )
    written = [
        episode_record(rollout_episode(0, True)),
        episode_record(rollout_episode(1, False), step=4),
        served,
    ]
    path = tmp_path / "t.jsonl"
    write_episodes(path, written)
    assert read_episodes(path) == written
    assert not list(tmp_path.glob(".*tmp"))  # the temporary file is gone
    first = json.loads(path.read_text().splitlines()[0])
    assert list(first)[:5] == ["episode", "accepted", "reward", "reason", "error"]
    assert "session_id" not in first and "step" not in first  # only where they apply

    views = episodes_from_file(path)
    assert [(v.index, v.accepted, v.reason) for v in views] == [
        (0, True, None),
        (1, False, "reward_fn raised"),
        (2, True, None),
    ]
    assert views[0].rows[0].token_ids == [5, 6, 7] and views[1].rows == []


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ({"episode": "3"}, "episode must be an integer"),
        ({"accepted": "yes"}, "accepted must be true or false"),
        ({"reward": "high"}, "reward must be a number"),
        ({"reason": 5}, "reason must be a string"),
    ],
)
def test_a_line_of_the_wrong_shape_is_a_usage_error_naming_field_and_line(
    tmp_path: Path, line: dict, named: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"episode": 0}) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(UsageError, match=rf"bad.jsonl:2: .*{named}"):
        read_episodes(path)
