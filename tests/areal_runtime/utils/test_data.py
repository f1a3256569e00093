# SPDX-License-Identifier: Apache-2.0
import pytest
import torch

from areal_runtime.utils.data import (
    TrajectoryError,
    collate_samples_to_list,
    concat_padded_tensors,
    get_batch_size,
    pad_sequences_to_tensors,
    trajectory_problems,
    validate_trajectory,
)


def traj(length: int, reward: float = 1.0, prompt: int = 2) -> dict:
    gen = length - prompt
    return {
        "input_ids": torch.arange(1, length + 1, dtype=torch.int32)[None],
        "loss_mask": torch.tensor([[0] * prompt + [1] * gen], dtype=torch.int32),
        "logprobs": torch.tensor([[0.0] * prompt + [-0.5] * gen], dtype=torch.float32),
        "versions": torch.tensor([[-1] * prompt + [3] * gen], dtype=torch.int32),
        "attention_mask": torch.ones(1, length, dtype=torch.bool),
        "rewards": torch.tensor([reward], dtype=torch.float32),
    }


def test_concat_right_pads_and_stacks():
    out = concat_padded_tensors([traj(3, 1.0), traj(5, 0.0)])
    assert out["input_ids"].shape == (2, 5) and out["input_ids"].dtype == torch.int32
    assert out["input_ids"][0].tolist() == [1, 2, 3, 0, 0]
    assert out["attention_mask"][0].tolist() == [True, True, True, False, False]
    assert out["versions"][0].tolist() == [-1, -1, 3, 0, 0]  # AReaL pads versions with 0
    assert out["rewards"].tolist() == [1.0, 0.0]


def test_concat_pad_value_does_not_touch_attention_mask():
    out = concat_padded_tensors([traj(2), traj(4)], pad_value=-7.0)
    assert out["logprobs"][0, 2:].tolist() == [-7.0, -7.0]
    assert out["attention_mask"][0, 2:].tolist() == [False, False]


def test_concat_of_one_is_a_shallow_copy_and_of_none_is_empty():
    t = traj(3)
    out = concat_padded_tensors([t])
    assert out is not t and out["input_ids"] is t["input_ids"]
    assert concat_padded_tensors([]) == {}


def test_concat_lists_multimodal_and_scalars():
    a, b = traj(2), traj(3)
    a.update(multi_modal_input=[{"pixel_values": 1}], tags=["x"], name="first")
    b.update(multi_modal_input=[{"pixel_values": 2}], tags=["y"], name="second")
    out = concat_padded_tensors([a, b])
    assert out["multi_modal_input"] == [{"pixel_values": 1}, {"pixel_values": 2}]
    assert out["tags"] == ["x", "y"] and out["name"] == "first"


def test_concat_promotes_dtypes():
    a, b = traj(2), traj(3)
    b["input_ids"] = b["input_ids"].long()
    assert concat_padded_tensors([a, b])["input_ids"].dtype == torch.int64


def test_concat_errors_name_the_problem():
    a, b = traj(2), traj(3)
    del b["versions"]
    with pytest.raises(ValueError, match=r"dict\[1\].*missing: \['versions'\]"):
        concat_padded_tensors([a, b])
    a, b = traj(2), traj(3)
    b["rewards"] = torch.tensor(1.0)
    with pytest.raises(ValueError, match=r"'rewards'.*different ranks"):
        concat_padded_tensors([a, b])
    a, b = traj(2), traj(3)
    a["rewards"], b["rewards"] = torch.tensor(1.0), torch.tensor(0.0)
    with pytest.raises(ValueError, match=r"'rewards' holds 0-d tensors"):
        concat_padded_tensors([a, b])
    a, b = traj(2), traj(3)
    b["rewards"] = torch.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"dict\[1\] mixes batch sizes"):
        concat_padded_tensors([a, b])


def test_pad_sequences_builds_attention_mask_from_first_key():
    out = pad_sequences_to_tensors(
        [
            {"input_ids": [1, 2, 3], "logprobs": [0.1, 0.2, 0.3]},
            {"input_ids": [4], "logprobs": [0.5]},
        ]
    )
    assert out["input_ids"].tolist() == [[1, 2, 3], [4, 0, 0]]
    assert out["attention_mask"].tolist() == [[True] * 3, [True, False, False]]
    assert pad_sequences_to_tensors([]) == {}


def test_collate_and_batch_size():
    rows = collate_samples_to_list([{"input_ids": [1, 2, 3]}, {"input_ids": torch.tensor([4])}])
    assert rows[0]["input_ids"].shape == (1, 3)
    assert rows[0]["attention_mask"].dtype == torch.bool and rows[1]["attention_mask"].shape == (
        1,
        1,
    )
    assert get_batch_size(concat_padded_tensors([traj(2), traj(3)])) == 2
    assert get_batch_size({"x": torch.zeros(4, 2)}) == 4
    with pytest.raises(ValueError, match="batch size"):
        get_batch_size({"x": 1})


def test_validate_accepts_a_good_trajectory():
    validate_trajectory(traj(4), batch_size=1)
    validate_trajectory(concat_padded_tensors([traj(2), traj(4)]), batch_size=2)


def test_validate_reports_every_violation_with_its_key():
    bad = traj(4)
    bad["input_ids"] = bad["input_ids"][0]  # 1-D
    bad["logprobs"] = torch.zeros(1, 5)  # length differs
    bad["rewards"] = torch.tensor(1.0)  # 0-d
    bad["versions"] = bad["versions"].float()  # dtype drift
    del bad["loss_mask"]
    problems = trajectory_problems(bad, batch_size=1)
    joined = "\n".join(problems)
    assert "missing key 'loss_mask'" in joined
    assert "'input_ids' must be 2-D" in joined and "unsqueeze(0)" in joined
    assert "'rewards' must be a 1-D tensor" in joined
    assert "'versions' has dtype torch.float32" in joined
    with pytest.raises(TrajectoryError) as info:
        validate_trajectory(bad)
    assert len(info.value.problems) >= 4


def test_validate_checks_lengths_batch_sizes_and_type():
    t = traj(4)
    t["logprobs"] = torch.zeros(1, 3)
    assert any("sequence lengths differ" in p for p in trajectory_problems(t))
    t = traj(4)
    assert any("expected batch size 2" in p for p in trajectory_problems(t, batch_size=2))
    t["rewards"] = torch.tensor([1, 0])
    assert any("float dtype" in p for p in trajectory_problems(t))
    assert trajectory_problems(None) == ["a trajectory must be a dict of tensors, got NoneType"]
