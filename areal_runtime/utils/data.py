# SPDX-License-Identifier: Apache-2.0
"""Tensor utilities for trajectories (AReaL's ``areal.utils.data``) and a trajectory validator.

Semantics follow AReaL: right padding, ``attention_mask`` padded with 0/False, lists concatenated,
non-tensor values taken from the first dict. Differences, all deliberate: errors name the key and
the shapes, and batch sizes are checked across keys. torch is imported on first use so that
importing the workflow API stays cheap.
"""

from __future__ import annotations

import dataclasses
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


# --- Normalisation and KL estimators (AReaL's Normalization, KLEstimator) ---------------------


def kl_from_log_ratio(log_ratio: torch.Tensor, estimator: str, clamp: bool = True) -> torch.Tensor:
    """Schulman's per-token estimators of KL(p || base) from ``log_ratio = log p - log base``.

    ``k1`` is the ratio itself (unbiased, may be negative), ``k2`` half its square, ``k3``
    ``1/r - 1 + log r`` (non-negative). ``clamp`` bounds the result to [-10, 10], as the
    KL penalty in the rewards does; the staleness filter compares unclamped values.
    """
    log_ratio = log_ratio.float()
    if estimator == "k1":
        out = log_ratio
    elif estimator == "k2":
        out = log_ratio.square() / 2.0
    elif estimator == "k3":
        out = (-log_ratio).exp() - 1 + log_ratio
    else:
        raise ValueError(f"Invalid KL estimator: {estimator}. Valid choices: k1, k2, k3")
    return out.clamp(min=-10, max=10) if clamp else out


class KLEstimator:
    """A chosen KL estimator (``k1``, ``k2`` or ``k3``), called as ``est(logp, logp_base)``."""

    def __init__(self, kl_estimator: str = "k1", apply_clamp: bool = True) -> None:
        if kl_estimator not in ("k1", "k2", "k3"):
            raise ValueError(f"Invalid KL estimator: {kl_estimator}. Valid choices: k1, k2, k3")
        self.kl_estimator = kl_estimator
        self.apply_clamp = apply_clamp

    def __call__(self, log_probs: torch.Tensor, log_probs_base: torch.Tensor) -> torch.Tensor:
        return self._compute_approx_kl(
            log_probs, log_probs_base, self.kl_estimator, self.apply_clamp
        )

    @staticmethod
    def _compute_approx_kl(
        log_probs: torch.Tensor,
        log_probs_base: torch.Tensor,
        kl_estimator: str = "k1",
        apply_clamp: bool = True,
    ) -> torch.Tensor:
        return kl_from_log_ratio(
            log_probs.float() - log_probs_base.float(), kl_estimator, clamp=apply_clamp
        )


class Normalization:
    """Centre and scale rewards or advantages over the batch or each group (AReaL's).

    ``mean_level`` and ``std_level`` are chosen independently ('batch', 'group' or None); the
    std is taken around the chosen mean (per element with ``mean_leave1out``). With a
    ``loss_mask`` only the masked entries count and the others come back as 0. Statistics are
    computed in float64 and reduced across ranks at batch level when a process group runs.

    Groups are ``group_size`` consecutive rows, as in AReaL, unless ``groups`` (one id per
    row) is passed: then a group that lost members still lines up (our trainer drops failed
    episodes), and a trailing partial group is its own group (AReaL leaves it unnormalised).
    """

    def __init__(self, config: Any) -> None:
        self.mean_level = config.mean_level
        self.mean_leave1out = config.mean_leave1out
        self.std_level = config.std_level
        self.std_unbiased = config.std_unbiased
        self.group_size = config.group_size
        self.eps = config.eps

    def __call__(
        self,
        x: torch.Tensor,
        loss_mask: torch.Tensor | None = None,
        high_precision: bool = True,
        reduce_group: Any = None,
        groups: torch.Tensor | None = None,
    ) -> torch.Tensor:
        torch = _torch()
        with torch.no_grad():
            if loss_mask is not None and not bool(loss_mask.any()):
                return x.float()
            dtype = torch.float64 if high_precision else torch.float32
            if "group" in (self.mean_level, self.std_level):
                if groups is None:
                    groups = torch.arange(x.shape[0], device=x.device) // self.group_size
                rows_of = [groups == g for g in torch.unique(groups)]
            if self.mean_level == "batch":
                mean = self._compute_mean(
                    x, loss_mask, high_precision, self.mean_leave1out, True, reduce_group
                ).expand_as(x)
            elif self.mean_level == "group":
                mean = torch.zeros_like(x, dtype=dtype)
                for rows in rows_of:
                    xx = x[rows]
                    if int(rows.sum()) == 1 and self.mean_leave1out:
                        # One sample: nothing to leave out but itself, so no baseline.
                        continue
                    m = loss_mask[rows] if loss_mask is not None else None
                    mean[rows] = self._compute_mean(
                        xx, m, high_precision, self.mean_leave1out, False, None
                    ).expand_as(xx)
            else:
                mean = torch.zeros_like(x, dtype=dtype)
            centred = x - mean
            if loss_mask is not None:
                centred = centred * loss_mask
            eps = self.eps
            if self.std_level == "batch":
                std = self._compute_std(
                    x, loss_mask, mean, self.std_unbiased, high_precision, True, reduce_group
                ).expand_as(x)
            elif self.std_level == "group":
                std = torch.ones_like(x, dtype=dtype)
                for rows in rows_of:
                    if int(rows.sum()) == 1 and self.std_unbiased:
                        continue  # one sample has no unbiased spread: divide by 1
                    xx = x[rows]
                    m = loss_mask[rows] if loss_mask is not None else None
                    std[rows] = self._compute_std(
                        xx, m, mean[rows], self.std_unbiased, high_precision, False, None
                    ).expand_as(xx)
            else:
                std, eps = torch.ones_like(x, dtype=dtype), 0.0
            return (centred / (std + eps)).float()

    @staticmethod
    def _sums(
        x: torch.Tensor, mask: torch.Tensor | None, all_reduce: bool, reduce_group: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(x * mask, count, sum)`` over every dim, reduced across ranks when asked."""
        torch = _torch()
        import torch.distributed as dist

        if mask is None:
            masked = x
            count = torch.tensor(float(x.numel()), dtype=x.dtype, device=x.device)
        else:
            mask = mask.to(x.dtype)
            masked = x * mask
            count = mask.sum()
        total = masked.sum()
        if all_reduce and dist.is_initialized():
            dist.all_reduce(count, op=dist.ReduceOp.SUM, group=reduce_group)
            dist.all_reduce(total, op=dist.ReduceOp.SUM, group=reduce_group)
        return masked, count, total

    @staticmethod
    def _compute_mean(
        x: torch.Tensor,
        mask: torch.Tensor | None,
        high_precision: bool,
        leave_one_out: bool,
        all_reduce: bool,
        reduce_group: Any,
    ) -> torch.Tensor:
        """The (masked) mean; with ``leave_one_out`` each valid entry's mean of the others."""
        torch = _torch()
        x = x.to(torch.float64 if high_precision else torch.float32)
        masked, count, total = Normalization._sums(x, mask, all_reduce, reduce_group)
        zero = torch.zeros((1,) * x.dim(), dtype=x.dtype, device=x.device)
        if leave_one_out:
            if float(count) <= 1:
                return zero
            if mask is None:
                return (total - x) / (count - 1)
            m = mask.to(x.dtype)
            others = (total - masked) / torch.clamp(count - m, min=1.0)
            return torch.where(m > 0, others, (total / count).expand_as(x))
        if float(count) == 0:
            return zero
        return (total / count).reshape((1,) * x.dim())

    @staticmethod
    def _compute_std(
        x: torch.Tensor,
        mask: torch.Tensor | None,
        mean: torch.Tensor,
        unbiased: bool,
        high_precision: bool,
        all_reduce: bool,
        reduce_group: Any,
    ) -> torch.Tensor:
        """The (masked) spread of ``x`` around ``mean``; 1 where it is undefined."""
        torch = _torch()
        import torch.distributed as dist

        x = x.to(torch.float64 if high_precision else torch.float32)
        mean = mean.to(x.dtype)
        if mask is None:
            deviation = x - mean
            count = torch.tensor(float(x.numel()), dtype=x.dtype, device=x.device)
        else:
            m = mask.to(x.dtype)
            deviation = (x - mean) * m
            count = m.sum()
        sum_sq = deviation.square().sum()
        if all_reduce and dist.is_initialized():
            dist.all_reduce(count, op=dist.ReduceOp.SUM, group=reduce_group)
            dist.all_reduce(sum_sq, op=dist.ReduceOp.SUM, group=reduce_group)
        one = torch.ones((1,) * x.dim(), dtype=x.dtype, device=x.device)
        if unbiased:
            return one if float(count) <= 1 else (sum_sq / (count - 1)).sqrt().reshape(one.shape)
        return one if float(count) == 0 else (sum_sq / count).sqrt().reshape(one.shape)


# --- Packing and micro-batches (AReaL's pack_tensor_dict, split_..._into_mb_list) -------------


def reorder_list(xs: Sequence[Any], indices: Sequence[int]) -> list[Any]:
    """``xs`` in the order ``indices`` (a permutation of its positions)."""
    if len(set(indices)) != len(xs):
        raise ValueError(f"indices must be a permutation of {len(xs)} positions, got {indices}")
    return [xs[i] for i in indices]


def dict_of_list2list_of_dict(dict_of_lists: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """``{k: [a, b]}`` -> ``[{k: a}, {k: b}]``; every list must have the same length."""
    if not dict_of_lists:
        return []
    lengths = {k: len(v) for k, v in dict_of_lists.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"All lists must have the same length, got {lengths}")
    n = next(iter(lengths.values()))
    return [{k: v[i] for k, v in dict_of_lists.items()} for i in range(n)]


def list_of_dict2dict_of_list(list_of_dicts: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """``[{k: a}, {k: b}]`` -> ``{k: [a, b]}``; every dict must have the same keys."""
    if not list_of_dicts:
        return {}
    keys = list(list_of_dicts[0])
    for i, d in enumerate(list_of_dicts):
        if set(d) != set(keys):
            raise ValueError(f"dict {i} has keys {sorted(d)}, expected {sorted(keys)}")
    return {k: [d[k] for d in list_of_dicts] for k in keys}


def unpack_sequence(
    x: torch.Tensor,
    cu_seqlens: torch.Tensor | None = None,
    lens: Sequence[int] | None = None,
    dim: int = 0,
) -> tuple[torch.Tensor, ...]:
    """Split a packed tensor back into its sequences, by ``lens`` or by ``cu_seqlens``."""
    if lens is not None:
        return _torch().split(x, [int(n) for n in lens], dim=dim)
    if cu_seqlens is not None:
        return _torch().split(x, (cu_seqlens[1:] - cu_seqlens[:-1]).tolist(), dim=dim)
    raise ValueError("Either cu_seqlens or input_lens must be provided.")


def pack_tensor_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """Drop the padding: every ``[B, S, ...]`` tensor becomes ``[total_tokens, ...]``.

    ``attention_mask`` (required, right padding) is replaced by ``cu_seqlens`` (int32,
    ``[B + 1]``) and ``max_seqlen``; other values pass through unchanged.
    """
    torch = _torch()
    if "attention_mask" not in data:
        raise ValueError("Input data must contain 'attention_mask' key.")
    attention_mask = data["attention_mask"]
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must be 2-D, got shape {tuple(attention_mask.shape)}")
    batch, width = attention_mask.shape
    lens = attention_mask.sum(dim=1, dtype=torch.int32)
    cu_seqlens = torch.nn.functional.pad(torch.cumsum(lens, dim=0, dtype=torch.int32), (1, 0))
    keep = attention_mask.bool()
    packed: dict[str, Any] = {}
    for key, value in data.items():
        if key == "attention_mask":
            packed["cu_seqlens"] = cu_seqlens
            packed["max_seqlen"] = int(lens.max()) if batch else 0
        elif (
            _is_tensor(value)
            and value.dim() >= 2
            and value.shape[0] == batch
            and value.shape[1] == width
        ):
            packed[key] = value[keep]  # row-major: sequence after sequence
        else:
            packed[key] = value
    return packed


def pad_and_stack_tensors_along_first_dim(tensor_list: Sequence[torch.Tensor]) -> torch.Tensor:
    """Stack tensors of different lengths along a new dim 0, zero-padding their dim 0."""
    torch = _torch()
    if len({t.dim() for t in tensor_list}) != 1:
        raise ValueError("All tensors must have the same number of dimensions.")
    longest = max(int(t.shape[0]) for t in tensor_list)
    out = [
        torch.nn.functional.pad(t, (0, 0) * (t.dim() - 1) + (0, longest - t.shape[0]))
        for t in tensor_list
    ]
    return torch.stack(out, dim=0)


def _ffd_groups(values: Sequence[int], capacity: int, min_groups: int) -> list[list[int]]:
    """First-fit decreasing: longest first, each into the fitting group with fewest items.

    At least ``min_groups`` groups are opened before any is shared.
    """
    order = sorted(range(len(values)), key=lambda i: -values[i])
    groups: list[list[int]] = []
    sums: list[int] = []
    for i in order:
        fits = [g for g in range(len(groups)) if sums[g] + values[i] <= capacity]
        if len(groups) < min_groups or not fits:
            groups.append([i])
            sums.append(values[i])
        else:
            g = min(fits, key=lambda g: (len(groups[g]), sums[g]))
            groups[g].append(i)
            sums[g] += values[i]
    return groups


def allocate_balanced_mbs(mb_spec: Any, lens: Sequence[int]) -> list[list[int]]:
    """Indices of ``lens`` per micro-batch: at least ``n_mbs`` of them, a multiple of
    ``n_mbs_divisor``, none over ``max_tokens_per_mb`` tokens (first-fit decreasing)."""
    capacity = mb_spec.max_tokens_per_mb
    if capacity is None:
        raise ValueError("allocate_balanced_mbs needs mb_spec.max_tokens_per_mb")
    values = [int(v) for v in lens]
    divisor = max(1, mb_spec.n_mbs_divisor)
    min_groups = max(mb_spec.n_mbs or 1, divisor)
    if any(v > capacity for v in values):
        raise RuntimeError(
            f"a sequence of {max(values)} tokens exceeds max_tokens_per_mb {capacity}"
        )
    while True:
        if len(values) < min_groups:
            raise RuntimeError(
                f"cannot split {len(values)} sequences into at least {min_groups} micro-batches "
                f"(n_mbs={mb_spec.n_mbs}, n_mbs_divisor={divisor})"
            )
        groups = _ffd_groups(values, capacity, min_groups)
        if len(groups) % divisor == 0:
            return sorted(sorted(g) for g in groups)
        min_groups = (len(groups) // divisor + 1) * divisor


@dataclasses.dataclass
class MicroBatchList:
    """Micro-batches of a padded batch and how to put their rows back in order.

    ``mbs[i]`` holds the rows ``forward_indices`` lists for it; ``backward_indices`` maps the
    concatenated micro-batch rows back to the original order; ``group_lens`` is each
    micro-batch's token count.
    """

    data: dict[str, Any]
    mb_spec: Any
    mbs: list[dict[str, Any]]
    group_lens: list[int]
    forward_indices: list[int] | None = None
    backward_indices: list[int] | None = None

    def __len__(self) -> int:
        return len(self.mbs)


def split_padded_tensor_dict_into_mb_list(
    data: Mapping[str, Any], mb_spec: Any, group: Any = None
) -> MicroBatchList:
    """Split a padded batch into token-balanced micro-batches by its ``attention_mask``.

    Tensors with one entry per token (``numel == B * S``) and ``position_ids`` are split by
    row; multimodal lists by sample; everything else is shared by every micro-batch. Rows
    stay in blocks of ``mb_spec.granularity`` (a prompt's samples, say). ``group`` is
    accepted for AReaL's signature; one process has no peers to agree with.
    """
    if "attention_mask" not in data:
        raise ValueError("Input data must be padded and contain 'attention_mask' key.")
    if mb_spec.max_tokens_per_mb is None:
        mb_spec = dataclasses.replace(mb_spec, max_tokens_per_mb=int(1e12))
    attention_mask = data["attention_mask"]
    batch, width = attention_mask.shape
    granularity = mb_spec.granularity
    if batch % granularity != 0:
        raise RuntimeError(f"Batch size {batch} cannot divide granularity {granularity}.")
    seq_lens = [int(n) for n in attention_mask.sum(1).tolist()]
    block_lens = [sum(seq_lens[b : b + granularity]) for b in range(0, batch, granularity)]
    blocks = allocate_balanced_mbs(mb_spec, block_lens)
    rows = [
        [r for b in block for r in range(b * granularity, (b + 1) * granularity)]
        for block in blocks
    ]
    forward_indices = [r for mb in rows for r in mb]
    backward_indices = [0] * batch
    for position, r in enumerate(forward_indices):
        backward_indices[r] = position
    mbs: list[dict[str, Any]] = [{} for _ in rows]
    for key, value in data.items():
        for i, mb_rows in enumerate(rows):
            if key.startswith(_MULTI_MODAL_PREFIX):
                mbs[i][key] = [value[r] for r in mb_rows]
            elif _is_tensor(value) and (key == "position_ids" or value.numel() == batch * width):
                mbs[i][key] = value[mb_rows]
            else:
                mbs[i][key] = value
    return MicroBatchList(
        data=dict(data),
        mb_spec=mb_spec,
        mbs=mbs,
        group_lens=[sum(seq_lens[r] for r in mb) for mb in rows],
        forward_indices=forward_indices,
        backward_indices=backward_indices,
    )


def batched_call(fn: Any, data: Sequence[Mapping[str, Any]], *, unpack: bool = True) -> Any:
    """Call ``fn`` once on the trajectories concatenated, then (``unpack``) split its result
    back per trajectory, each trimmed to its own width (AReaL's ``batched_call``)."""
    sizes = [get_batch_size(d) for d in data]
    widths = [int(d["attention_mask"].shape[-1]) for d in data]
    result = fn(concat_padded_tensors(list(data)))
    if not unpack or result is None:
        return result

    def split(value: Any) -> list[Any]:
        parts = list(value.split(sizes, dim=0))
        return [p[..., :w] if p.dim() >= 2 else p for p, w in zip(parts, widths, strict=True)]

    if _is_tensor(result):
        return split(result)
    if isinstance(result, Mapping):
        out: list[dict[str, Any]] = [{} for _ in data]
        for key, value in result.items():
            pieces = (
                split(value)
                if _is_tensor(value) and value.shape[0] == sum(sizes)
                else [value] * len(data)
            )
            for i, piece in enumerate(pieces):
                out[i][key] = piece
        return out
    return result
