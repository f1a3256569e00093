# SPDX-License-Identifier: Apache-2.0
"""What ``areal-devkit train`` shows while and after it trains: the metrics JSONL, the progress
bar, the reward plot and the summary table. Kept apart from the command so it stays thin.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime

TABLE_ROWS = 10


class Reporter:
    """Metrics JSONL, the progress bar (terminal only) and the plot."""

    def __init__(self, args: argparse.Namespace, config: Any) -> None:
        self.args = args
        self.history: list[dict[str, Any]] = []
        self.start = time.perf_counter()
        self.file = None
        self.bar: Any = None
        self.task: Any = None
        self.tty = sys.stderr.isatty() and not args.quiet
        self.warned_flat = False  # the no-reward-variance warning is printed once

    def __enter__(self) -> Reporter:
        if self.args.metrics_out:
            self.file = open(self.args.metrics_out, "w", encoding="utf-8")
        if self.tty:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("train"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("train", total=self.args.steps, info="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        if self.file is not None:
            self.file.close()
            self.file = None

    def step(self, result: Any) -> None:
        m = dict(result.metrics)
        m["elapsed_s"] = time.perf_counter() - self.start
        self.history.append(m)
        if not self.warned_flat and m.get("groups_with_reward_variance", 1) == 0:
            self.warned_flat = True
            print(flat_reward_warning(m), file=sys.stderr, flush=True)
        if self.file is not None:
            self.file.write(json.dumps(m) + "\n")
            self.file.flush()
        info = (
            f"reward {m['reward_mean']:.3f}  clip {m['clip_fraction']:.3f}  "
            f"stale {m['staleness_mean']:.2f}"
        )
        if self.bar is not None:
            self.bar.update(self.task, advance=1, info=info)
        elif not self.args.quiet and (m["step"] % 10 == 0 or m["step"] == 1):
            print(f"step {m['step']}: {info}  ({m['elapsed_s']:.0f}s)", file=sys.stderr, flush=True)

    def finish(self, stats_path: Path | None = None) -> None:
        """Plot the run from the stats logger's file (the one the viewer reads too)."""
        history = self.history
        if stats_path is not None and stats_path.is_file():
            history = [r for r in runtime.read_stats(stats_path) if "reward_mean" in r] or history
            print(f"statistics: {stats_path} (areal-devkit view {stats_path.parent})")
        if self.args.plot and history:
            plot_metrics(history, Path(self.args.plot))
            print(f"wrote {self.args.plot}")


def plot_metrics(history: list[dict[str, Any]], path: Path) -> None:
    """Reward (mean and std band, with a moving average), ratio/clip, entropy/KL, staleness."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [m["step"] for m in history]

    def series(key: str) -> list[float]:
        return [float(m.get(key, 0.0)) for m in history]

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    ax = axes[0][0]
    mean, std = series("reward_mean"), series("reward_std")
    ax.plot(steps, mean, label="reward mean", color="C0")
    ax.fill_between(
        steps,
        [a - b for a, b in zip(mean, std)],
        [a + b for a, b in zip(mean, std)],
        alpha=0.15,
        color="C0",
    )
    ax.plot(steps, moving_average(mean, 5), label="moving average (5)", color="C3")
    ax.set_title("reward")
    ax.set_ylim(-0.05, 1.05 if max(mean, default=0) <= 1 else None)
    ax.legend(loc="lower right")
    ax = axes[0][1]
    ax.plot(steps, series("importance_ratio_mean"), label="ratio mean")
    ax.plot(steps, series("importance_ratio_max"), label="ratio max", alpha=0.6)
    ax.plot(steps, series("clip_fraction"), label="clip fraction")
    ax.set_title("importance ratio and clipping")
    ax.legend()
    ax = axes[1][0]
    ax.plot(steps, series("entropy"), label="entropy")
    ax.plot(steps, series("approx_kl"), label="approx KL (new vs proximal)")
    if any(series("kl_ref")):
        ax.plot(steps, series("kl_ref"), label="KL to start")
    ax.set_title("entropy and KL")
    ax.legend()
    ax = axes[1][1]
    ax.plot(steps, series("staleness_mean"), label="mean staleness (versions)")
    ax.set_title("staleness and throughput")
    ax.set_xlabel("step")
    twin = ax.twinx()
    twin.plot(steps, series("rollout_tokens_per_s"), color="C2", alpha=0.6, label="rollout tok/s")
    twin.plot(steps, series("train_tokens_per_s"), color="C4", alpha=0.6, label="train tok/s")
    ax.legend(loc="upper left")
    twin.legend(loc="upper right")
    for row in axes:
        for a in row:
            a.set_xlabel("step")
    fig.tight_layout()
    try:
        with runtime.atomic_open(path, "wb") as f:
            fig.savefig(f, dpi=100, format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)


def moving_average(values: list[float], window: int) -> list[float]:
    out = []
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out


def print_summary(history: list[Any], rerun: str | None = None) -> None:
    """The reward table: the run in at most TABLE_ROWS slices, then the totals."""
    from rich.console import Console
    from rich.table import Table

    metrics = [r.metrics for r in history]
    if not metrics:
        return
    size = max(1, math.ceil(len(metrics) / TABLE_ROWS))
    table = Table(title="areal-devkit train")
    for name in (
        "steps",
        "reward",
        "± std",
        "clip",
        "ratio max",
        "KL",
        "entropy",
        "stale",
        "s/step",
    ):
        table.add_column(name, justify="right")
    for i in range(0, len(metrics), size):
        chunk = metrics[i : i + size]

        def avg(key: str, chunk: list[dict[str, Any]] = chunk) -> float:
            return sum(float(m[key]) for m in chunk) / len(chunk)

        table.add_row(
            f"{chunk[0]['step']}-{chunk[-1]['step']}",
            f"{avg('reward_mean'):.3f}",
            f"{avg('reward_std'):.3f}",
            f"{avg('clip_fraction'):.3f}",
            f"{max(float(m['importance_ratio_max']) for m in chunk):.2f}",
            f"{avg('approx_kl'):.4f}",
            f"{avg('entropy'):.3f}",
            f"{avg('staleness_mean'):.2f}",
            f"{avg('step_seconds'):.2f}",
        )
    Console(width=max(100, Console().width)).print(table)
    head = metrics[: min(5, len(metrics))]
    tail = metrics[-min(5, len(metrics)) :]
    first = sum(m["reward_mean"] for m in head) / len(head)
    final = sum(m["reward_mean"] for m in tail) / len(tail)
    seconds = sum(m["step_seconds"] for m in metrics)
    print(
        f"reward {first:.3f} -> {final:.3f} (mean of the first and last {len(head)} steps); "
        f"{len(metrics)} steps in {seconds:.0f}s, {throughput(metrics, seconds)}; "
        f"{rejected_line(metrics)}"
    )
    if any("stale" in m.get("rejected_by_reason", {}) for m in metrics):
        print(f"  stale: {STALE}")
    flat = flat_steps_line(metrics)
    if flat:
        print(flat)
    why: Counter[str] = Counter()
    for m in metrics:
        why.update(m.get("rejected_why", {}))
    for cause, count in why.most_common(3):
        print(f"  {count:>5} x {cause}")
    if why and rerun:
        print(f"see each rejection with its traceback: {rerun}")


STALE = (
    "the group's oldest token was sampled more versions before the update that would train it "
    "than --max-staleness (AReaL's rollout.max_head_offpolicyness) allows, so it was dropped, as "
    "AReaL drops it"
)


def throughput(metrics: list[dict[str, Any]], seconds: float) -> str:
    """Episodes trained a second, and trajectory rows where an episode gives more than one (an
    agent's turns): a rate of rows alone read as more episodes than were run."""
    episodes = sum(m["accepted"] * m.get("group_size", 1) for m in metrics)
    rows = sum(m["samples"] for m in metrics)
    scale = 1 / seconds if seconds else 0.0
    line = f"{episodes * scale:.1f} episodes/s"
    return line if rows == episodes else f"{line} ({rows * scale:.1f} trained rows/s)"


def rejected_line(metrics: list[dict[str, Any]]) -> str:
    """What was not trained on, and why. A group (``--group-size`` samples of one prompt) is
    accepted or rejected whole, so with groups of several samples the count is in groups: a
    share of groups beside a total of trained rows understated it (5 groups of 8 two-turn
    episodes read as 0.2%)."""
    rejected = sum(m["rejected"] for m in metrics)
    if not rejected:
        return "0 episodes rejected"
    groups = sum(m["accepted"] for m in metrics)
    size = max(int(m.get("group_size", 1)) for m in metrics)
    what = plural(rejected, "episode")
    if size > 1:
        what = f"{plural(rejected, 'group')} of {size} episodes"
    reasons: Counter[str] = Counter()
    for m in metrics:
        reasons.update(m.get("rejected_by_reason", {}))
    why = ", ".join(f"{count} {reason}" for reason, count in reasons.most_common())
    return f"{what} rejected ({rejected / (rejected + groups):.1%} of {rejected + groups}): {why}"


def flat_reward_warning(m: dict[str, Any]) -> str:
    """Why a step with no reward variance in any group learns nothing, and what usually causes it."""
    value = m.get("reward_mean", 0.0)
    if value <= 0:
        likely = (
            "the model cannot do the task yet (an easier dataset, a stronger model with "
            "--engine hf:PATH, more --max-new-tokens or a higher --temperature), or the reward "
            "never matches (look at a few episodes and their rewards: areal-devkit run)"
        )
    else:
        likely = (
            "the reward is constant (it ignores the answer: check the reward function), or the "
            "task is already solved (a harder dataset)"
        )
    return (
        f"areal-devkit train: warning: step {m['step']}: every sample of each prompt got the same "
        f"reward (mean {value:.3f}), so GRPO's advantages are all 0 and the step learns nothing. "
        f"Likely: {likely}. Shown once; the summary counts such steps."
    )


def flat_steps_line(metrics: list[dict[str, Any]]) -> str | None:
    """The summary's line on steps that had nothing to learn from, or None when every step had."""
    flat = [m for m in metrics if m.get("groups_with_reward_variance", 1) == 0]
    if not flat:
        return None
    return (
        f"warning: {len(flat)} of {plural(len(metrics), 'step')} had no reward variance in any "
        "group (nothing to learn from): "
        + flat_reward_warning(flat[-1])
        .split("Likely: ", 1)[1]
        .removesuffix(" Shown once; the summary counts such steps.")
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def stall_warning(stalls: list[Any]) -> str | None:
    """What the workflow's own code blocked while training, the longest shown in full: each
    time, every episode and the engine's batch waited (slower steps, nothing wrong in the
    numbers), so it is a warning, not a failure."""
    if not stalls:
        return None
    longest = max(stalls, key=lambda stall: stall.duration_s)
    total = sum(stall.duration_s for stall in stalls)
    return (
        f"warning: the workflow blocked the event loop {plural(len(stalls), 'time')} while "
        f"training ({total:.1f} s in all; every episode waited meanwhile); the longest:\n"
        + longest.format()
    )
