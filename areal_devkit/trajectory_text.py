# SPDX-License-Identifier: Apache-2.0
"""Trajectories as a person reads them: turns of context and trained completion, decoded.

A trajectory row alternates runs of context tokens (``loss_mask`` 0: prompt, feedback, tool
results) and runs of trained tokens (``loss_mask`` 1: what the model sampled). ``run`` prints
them and ``view`` colours them; both split rows the same way here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Segment:
    """A run of tokens with the same ``loss_mask``: context (False) or trained (True)."""

    trained: bool
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)


@dataclass
class TrajectoryRow:
    """One sequence of a trajectory (an episode has one, or one per turn/interaction)."""

    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    versions: list[int]
    reward: float | None

    def segments(self) -> list[Segment]:
        out: list[Segment] = []
        for i, tok in enumerate(self.token_ids):
            trained = bool(self.loss_mask[i])
            if not out or out[-1].trained != trained:
                out.append(Segment(trained))
            seg = out[-1]
            seg.token_ids.append(tok)
            seg.logprobs.append(self.logprobs[i])
            seg.versions.append(self.versions[i])
        return out


def _row_list(value: Any, row: int, length: int, default: float) -> list:
    if value is None:
        return [default] * length
    data = value[row].tolist() if hasattr(value, "tolist") else list(value[row])
    return data[:length]


def rows_of(traj: dict[str, Any]) -> list[TrajectoryRow]:
    """Split a trajectory dict (``[B, L]`` tensors or nested lists) into rows without padding."""
    ids = traj.get("input_ids")
    if ids is None:
        return []
    ids_rows = ids.tolist() if hasattr(ids, "tolist") else [list(r) for r in ids]
    rewards = traj.get("rewards")
    reward_list = rewards.tolist() if hasattr(rewards, "tolist") else rewards
    out = []
    for r, row_ids in enumerate(ids_rows):
        attention = _row_list(traj.get("attention_mask"), r, len(row_ids), 1)
        length = sum(1 for a in attention if a) or len(row_ids)
        reward = reward_list[r] if isinstance(reward_list, list) and r < len(reward_list) else None
        out.append(
            TrajectoryRow(
                token_ids=[int(t) for t in row_ids[:length]],
                loss_mask=[int(m) for m in _row_list(traj.get("loss_mask"), r, length, 0)],
                logprobs=[float(x) for x in _row_list(traj.get("logprobs"), r, length, 0.0)],
                versions=[int(v) for v in _row_list(traj.get("versions"), r, length, -1)],
                reward=None if reward is None else float(reward),
            )
        )
    return out


def decode(tokenizer: Any, token_ids: list[int]) -> str:
    """Text with special tokens kept (a person must see the EOS), or the ids without a tokenizer."""
    if tokenizer is None:
        return " ".join(str(t) for t in token_ids)
    return tokenizer.decode(token_ids, skip_special_tokens=False)


def format_row(row: TrajectoryRow, tokenizer: Any, *, width: int = 100) -> list[str]:
    """``context:`` / ``trained:`` lines per segment, long context shortened to its tail."""
    lines = []
    for seg in row.segments():
        text = decode(tokenizer, seg.token_ids).replace("\n", "\\n")
        label = "completion" if seg.trained else "context"
        if not seg.trained and len(text) > width:
            text = "..." + text[-(width - 3) :]
        lines.append(f"  {label:<10} | {text}")
    return lines
