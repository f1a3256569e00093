# SPDX-License-Identifier: Apache-2.0
"""Tensor utilities for trajectories (AReaL's ``areal.utils.data``) and a trajectory validator.

Semantics follow AReaL: right padding, ``attention_mask`` padded with 0/False, lists concatenated,
non-tensor values taken from the first dict. Differences, all deliberate: errors name the key and
the shapes, and batch sizes are checked across keys. torch is imported on first use so that
importing the workflow API stays cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from areal_runtime.errors import TrajectoryError

if TYPE_CHECKING:
    import torch

_MULTI_MODAL_PREFIX = "multi_modal_input"
TRAJECTORY_REQUIRED_KEYS = ("input_ids", "attention_mask", "loss_mask", "logprobs", "rewards")
_SEQUENCE_KEYS = ("input_ids", "attention_mask", "loss_mask", "logprobs", "versions")


def _torch() -> Any:
    import torch

    return torch


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")  # no tensor can exist before torch is imported
    return torch is not None and isinstance(value, torch.Tensor)


def concat_padded_tensors(
    tensor_dicts: Sequence[Mapping[str, Any]], pad_value: float = 0.0
) -> dict[str, Any]:
    """Concatenate trajectory dicts along dim 0, right-padding dims 1.. to their maximum.

    ``[b_i, L_i]`` tensors become ``[sum b_i, max L_i]``; ``[b_i]`` tensors are concatenated.
    ``attention_mask`` is always padded with 0. One dict is returned as a shallow copy.
    """
    if not tensor_dicts:
        return {}
    first = tensor_dicts[0]
    for index, d in enumerate(tensor_dicts[1:], start=1):
        if set(d) != set(first):
            raise ValueError(
                f"concat_padded_tensors: dict[{index}] has keys {sorted(d)} but dict[0] has "
                f"{sorted(first)}; every trajectory in a batch must have the same keys "
                f"(missing: {sorted(set(first) - set(d))}, extra: {sorted(set(d) - set(first))})"
            )
    if len(tensor_dicts) == 1:
        return dict(first)
    result: dict[str, Any] = {}
    batch_sizes: dict[str, list[int]] = {}
    for key, value in first.items():
        values = [d[key] for d in tensor_dicts]
        if key.startswith(_MULTI_MODAL_PREFIX):
            result[key] = [item for v in values for item in v]
        elif _is_tensor(value):
            pad = 0 if key == "attention_mask" else pad_value
            result[key] = _concat_tensors(key, values, pad)
            batch_sizes[key] = [int(v.shape[0]) for v in values]
        elif isinstance(value, list):
            result[key] = [item for v in values for item in v]
        else:
            result[key] = value
    _check_batch_sizes(batch_sizes)
    return result


def _check_batch_sizes(batch_sizes: dict[str, list[int]]) -> None:
    """Raise, naming the dict and keys, unless every tensor of a dict shares dim 0."""
    keys = list(batch_sizes)
    for key in keys[1:]:
        if batch_sizes[key] != batch_sizes[keys[0]]:
            index = next(
                i for i, (a, b) in enumerate(zip(batch_sizes[keys[0]], batch_sizes[key])) if a != b
            )
            sizes = {k: batch_sizes[k][index] for k in keys}
            raise ValueError(
                f"concat_padded_tensors: dict[{index}] mixes batch sizes {sizes}; every tensor "
                "of one trajectory must share dim 0 (shape [B, L], rewards [B])"
            )


def _concat_tensors(key: str, values: list[Any], pad: float) -> torch.Tensor:
    torch = _torch()
    dims = {v.dim() for v in values}
    if len(dims) != 1:
        shapes = [tuple(v.shape) for v in values]
        raise ValueError(
            f"concat_padded_tensors: key {key!r} has tensors of different ranks {shapes}; "
            "use [B, L] for sequences and [B] for rewards in every trajectory"
        )
    ndim = dims.pop()
    if ndim == 0:
        raise ValueError(
            f"concat_padded_tensors: key {key!r} holds 0-d tensors, which cannot be "
            "concatenated; give it a batch dimension (e.g. torch.tensor([reward]))"
        )
    dtypes = {v.dtype for v in values}
    dtype = dtypes.pop()
    for other in dtypes:
        dtype = torch.promote_types(dtype, other)
    if ndim == 1:
        return torch.cat([v.to(dtype) for v in values])
    if ndim == 2 or all(v.shape[2:] == values[0].shape[2:] for v in values):
        # One C++ call pads every row: cheaper than padding each tensor and then concatenating.
        rows = [row for v in values for row in (v if v.dtype == dtype else v.to(dtype)).unbind(0)]
        return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad)
    trailing = [max(int(v.shape[d]) for v in values) for d in range(1, ndim)]
    total = sum(int(v.shape[0]) for v in values)
    out = torch.full((total, *trailing), pad, dtype=dtype, device=values[0].device)
    row = 0
    for v in values:
        index = (slice(row, row + v.shape[0]), *(slice(0, s) for s in v.shape[1:]))
        out[index] = v
        row += v.shape[0]
    return out


def pad_sequences_to_tensors(
    sequence_list: Sequence[Mapping[str, Any]], pad_value: float = 0.0
) -> dict[str, Any]:
    """Stack per-sample 1-D sequences into ``[B, L]`` tensors padded to the global maximum.

    ``attention_mask`` is (re)built from the length of each sample's first non-multimodal key.
    """
    if not sequence_list:
        return {}
    torch = _torch()
    keys = [k for k in sequence_list[0] if not k.startswith(_MULTI_MODAL_PREFIX)]
    max_len = max(len(sample[k]) for sample in sequence_list for k in keys) if keys else 0
    result: dict[str, Any] = {}
    for key in keys:
        rows = []
        for sample in sequence_list:
            seq = sample[key]
            seq = seq if _is_tensor(seq) else torch.tensor(list(seq))
            rows.append(torch.nn.functional.pad(seq, (0, max_len - len(seq)), value=pad_value))
        result[key] = torch.stack(rows)
    if keys:
        lengths = torch.tensor([len(sample[keys[0]]) for sample in sequence_list])
        result["attention_mask"] = torch.arange(max_len)[None, :] < lengths[:, None]
    for key in sequence_list[0]:
        if key.startswith(_MULTI_MODAL_PREFIX):
            merged = []
            for sample in sequence_list:
                for item in sample[key]:
                    merged.append(
                        {
                            k: v if _is_tensor(v) else torch.as_tensor(v)
                            for k, v in dict(item).items()
                        }
                    )
            result[key] = merged
    return result


def collate_samples_to_list(sequence_list: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One ``[1, L]`` tensor dict per row, with an all-ones bool ``attention_mask`` if absent."""
    torch = _torch()
    out = []
    for row in sequence_list:
        sample: dict[str, Any] = {}
        for key, value in row.items():
            tensor = value if _is_tensor(value) else torch.as_tensor(value)
            sample[key] = tensor.unsqueeze(0) if tensor.dim() <= 1 else tensor
        if "attention_mask" not in sample:
            first = next(iter(sample.values()), None)
            length = first.shape[-1] if first is not None else 0
            sample["attention_mask"] = torch.ones(1, length, dtype=torch.bool)
        out.append(sample)
    return out


def get_batch_size(data: Mapping[str, Any]) -> int:
    """Batch size from ``attention_mask``, else ``cu_seqlens``, else multimodal, else any tensor."""
    if "attention_mask" in data:
        return int(data["attention_mask"].shape[0])
    if "cu_seqlens" in data:
        return int(data["cu_seqlens"].shape[0]) - 1
    for key, value in data.items():
        if key.startswith(_MULTI_MODAL_PREFIX):
            return len(value)
    for value in data.values():
        if _is_tensor(value) and value.dim() >= 1:
            return int(value.shape[0])
    raise ValueError("cannot infer the batch size: the dict holds no tensor with a batch dimension")


def trajectory_problems(traj: Any, batch_size: int | None = None) -> list[str]:
    """Every way ``traj`` breaks what the trainer relies on (keys, shapes, dtypes), each naming its key."""
    torch = _torch()
    if not isinstance(traj, Mapping):
        return [f"a trajectory must be a dict of tensors, got {type(traj).__name__}"]
    problems = [f"missing key {key!r}" for key in TRAJECTORY_REQUIRED_KEYS if key not in traj]
    lengths: dict[str, int] = {}
    batches: dict[str, int] = {}
    for key in _SEQUENCE_KEYS:
        value = traj.get(key)
        if value is None:
            continue
        if not _is_tensor(value):
            problems.append(f"{key!r} must be a tensor, got {type(value).__name__}")
            continue
        if value.dim() != 2:
            problems.append(
                f"{key!r} must be 2-D [batch, seq_len], got shape {tuple(value.shape)}"
                + ("; add the batch dimension with .unsqueeze(0)" if value.dim() == 1 else "")
            )
            continue
        batches[key], lengths[key] = int(value.shape[0]), int(value.shape[1])
    if len(set(lengths.values())) > 1:
        problems.append(f"sequence lengths differ across keys: {lengths}")
    expected_dtypes = {
        "attention_mask": (torch.bool,),
        "logprobs": (torch.float32, torch.float64, torch.bfloat16, torch.float16),
        "input_ids": (torch.int32, torch.int64),
        "loss_mask": (torch.int32, torch.int64, torch.bool),
        "versions": (torch.int32, torch.int64),
    }
    for key, allowed in expected_dtypes.items():
        value = traj.get(key)
        if _is_tensor(value) and value.dtype not in allowed:
            problems.append(f"{key!r} has dtype {value.dtype}; expected one of {list(allowed)}")
    rewards = traj.get("rewards")
    if rewards is not None:
        if not _is_tensor(rewards) or rewards.dim() != 1:
            shape = tuple(rewards.shape) if _is_tensor(rewards) else type(rewards).__name__
            problems.append(
                f"'rewards' must be a 1-D tensor shaped [batch], got {shape}"
                + ("; use torch.tensor([reward])" if _is_tensor(rewards) else "")
            )
        elif not rewards.is_floating_point():
            problems.append(f"'rewards' has dtype {rewards.dtype}; expected a float dtype")
        else:
            batches["rewards"] = int(rewards.shape[0])
    if len(set(batches.values())) > 1:
        problems.append(f"batch sizes differ across keys: {batches}")
    if batch_size is not None and batches and set(batches.values()) != {batch_size}:
        problems.append(f"expected batch size {batch_size}, got {batches}")
    return problems


def validate_trajectory(traj: Any, batch_size: int | None = None) -> None:
    """Raise ``TrajectoryError`` listing every violation of the trajectory contract."""
    problems = trajectory_problems(traj, batch_size=batch_size)
    if problems:
        raise TrajectoryError(problems)
