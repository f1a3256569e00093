# SPDX-License-Identifier: Apache-2.0
"""What a rollout produced: one record per episode, and totals a person can read."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from areal_runtime.errors import RejectReason
from areal_runtime.infra.stall_detector import StallReport


@dataclass
class EpisodeRecord:
    """One episode (or group): accepted with its trajectory, or rejected with the reason."""

    index: int
    task_id: int
    accepted: bool
    latency_s: float
    reward: float | None = None  # the mean of ``episode_rewards``
    # One reward an episode (group_size of them for a group), whatever rows each trained: an
    # agent's episode gives a row a turn, and a mean over rows weighs long episodes more.
    episode_rewards: list[float] = field(default_factory=list)
    generated_tokens: int = 0
    sequence_length: int = 0
    reason: RejectReason | None = None
    error: str | None = None
    trajectory: dict[str, Any] | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)  # what went wrong without failing it


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class RolloutReport:
    """Totals of a rollout run; ``format()`` renders them as text."""

    episodes: int
    accepted: int
    rejected: int
    rejected_by_reason: dict[str, int]
    reward_mean: float
    reward_std: float
    latency_p50_s: float
    latency_p90_s: float
    latency_p99_s: float
    generated_tokens: int
    wall_s: float
    reward_timeouts: int
    stalls: list[StallReport]
    episodes_with_notes: int = 0

    @property
    def tokens_per_s(self) -> float:
        return self.generated_tokens / self.wall_s if self.wall_s > 0 else 0.0

    @classmethod
    def from_records(
        cls,
        records: list[EpisodeRecord],
        wall_s: float,
        reward_timeouts: int,
        stalls: list[StallReport],
    ) -> RolloutReport:
        rewards = [r.reward for r in records if r.accepted and r.reward is not None]
        latencies = [r.latency_s for r in records]
        reasons: dict[str, int] = {}
        for r in records:
            if not r.accepted:
                reasons[str(r.reason)] = reasons.get(str(r.reason), 0) + 1
        accepted = sum(r.accepted for r in records)
        return cls(
            episodes=len(records),
            accepted=accepted,
            rejected=len(records) - accepted,
            rejected_by_reason=reasons,
            reward_mean=statistics.fmean(rewards) if rewards else float("nan"),
            reward_std=statistics.pstdev(rewards) if rewards else float("nan"),
            latency_p50_s=_percentile(latencies, 0.5),
            latency_p90_s=_percentile(latencies, 0.9),
            latency_p99_s=_percentile(latencies, 0.99),
            generated_tokens=sum(r.generated_tokens for r in records if r.accepted),
            wall_s=wall_s,
            reward_timeouts=reward_timeouts,
            stalls=stalls,
            episodes_with_notes=sum(bool(r.notes) for r in records),
        )

    @property
    def workflow_stalls(self) -> int:
        """Stalls the workflow's code caused (not first imports, not the runtime's own)."""
        return sum(stall.is_workflows for stall in self.stalls)

    def format(self) -> str:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(self.rejected_by_reason.items()))
        lines = [
            f"episodes {self.episodes}  accepted {self.accepted}  rejected {self.rejected}"
            + (f" ({reasons})" if reasons else ""),
            f"reward mean {self.reward_mean:.3f}  std {self.reward_std:.3f}",
            f"latency p50 {self.latency_p50_s * 1000:.1f} ms  p90 {self.latency_p90_s * 1000:.1f} ms"
            f"  p99 {self.latency_p99_s * 1000:.1f} ms",
            f"generated tokens {self.generated_tokens}  ({self.tokens_per_s:.0f} tok/s over "
            f"{self.wall_s:.2f} s)",
            f"reward timeouts {self.reward_timeouts}  loop stalls {self.workflow_stalls}"
            + (
                f" (+{len(self.stalls) - self.workflow_stalls} not the workflow's)"
                if len(self.stalls) > self.workflow_stalls
                else ""
            )
            + (
                f"  episodes with notes {self.episodes_with_notes}"
                if self.episodes_with_notes
                else ""
            ),
        ]
        lines.extend(stall.format() for stall in self.stalls)
        return "\n".join(lines)
