# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit run``: run a workflow over a dataset and show what happened.

The output leads with what a person wants first: the totals, a few episodes as text (prompt,
completion, reward, turn by turn), then every rejected episode with the head of its traceback.
The per-episode table comes only with ``--table`` or for small runs. Like pytest, the exit
status is 1 when any episode failed (``--allow-rejected`` accepts them).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.commands.workflow_args import (
    add_seed_argument,
    add_stall_threshold_argument,
    add_workflow_arguments,
    opened_workflow,
    stall_threshold_s,
)
from areal_devkit.engine_summary import prefix_cache_line
from areal_devkit.episode_record import EpisodeRecord, tensors_as_lists, write_episodes
from areal_devkit.errors import UsageError, usage_errors
from areal_devkit.runtime_facade import atomic_open

SMALL_RUN = 16
TRACEBACK_HEAD = 6

EXAMPLES = """examples:
  areal-devkit run examples.arithmetic_rlvr:ArithmeticRLVRWorkflow
  areal-devkit run mypkg.workflow.math:MathWorkflow --data train.jsonl --limit 32 --show 5
  areal-devkit run my_agent.py:MyAgent --engine hf:./my-model --html episodes.html
  areal-devkit run mypkg.workflow.math:MathWorkflow --engine sglang:127.0.0.1:30000 --output t.jsonl

exit status: 0 every episode accepted (or dropped on purpose: None, should_accept_fn), 1 an
episode was rejected (--allow-rejected: only when none was accepted) or, with --fail-on-stall,
the workflow's code stalled the event loop; 2 usage error.
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "run",
        help="run a workflow over a dataset and report the results",
        description="Run a workflow on a real model and show the episodes it produced.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workflow_arguments(p)
    p.add_argument("--concurrency", type=int, default=64)
    add_seed_argument(p)
    p.add_argument("--eval", action="store_true", help="set WorkflowContext.is_eval")
    p.add_argument(
        "--agent-mode",
        choices=["inline", "subproc"],
        default="inline",
        help="agents: on the event loop, or in worker processes (for agents that block)",
    )
    p.add_argument(
        "--validate", action="store_true", help="reject trajectories that break the contract"
    )
    add_stall_threshold_argument(p, 50.0, "count a stall (exit 1 with --fail-on-stall)")
    p.add_argument(
        "--fail-on-stall",
        action="store_true",
        help="exit 1 if the workflow's code stalled the event loop (first-use set-up by a "
        "library or the runtime never counts)",
    )
    p.add_argument(
        "--allow-rejected",
        action="store_true",
        help="exit 0 even when episodes are rejected (a workflow that raised, returned an empty "
        "or invalid trajectory); without it, like pytest, any such episode makes the exit 1",
    )
    p.add_argument("--show", type=int, default=3, metavar="N", help="episodes shown as text")
    p.add_argument(
        "--table", action="store_true", help=f"the per-episode table (always for <= {SMALL_RUN})"
    )
    p.add_argument("--output", help="write trajectories: .pt (torch.save of the batch) or .jsonl")
    p.add_argument("--html", help="write the trajectory viewer page (open it in a browser)")
    p.set_defaults(handler=run)


def check_output_paths(args: argparse.Namespace) -> None:
    """Refuse bad output paths before minutes of rollout, not after."""
    if args.output and Path(args.output).suffix not in (".pt", ".jsonl"):
        raise UsageError(f"--output must end in .pt or .jsonl, got {args.output}")
    for value in (args.output, args.html):
        if value and not Path(value).resolve().parent.is_dir():
            raise UsageError(f"the folder of {value} does not exist; create it first")


def run(args: argparse.Namespace) -> int:
    if args.show < 0:
        raise UsageError(f"--show must be >= 0, got {args.show}")
    check_output_paths(args)
    with usage_errors():  # RolloutConfig refuses flags it cannot run with (--concurrency 0)
        config = runtime.RolloutConfig(
            concurrency=args.concurrency,
            group_size=args.group_size,
            is_eval=args.eval,
            validate=args.validate,
            stall_threshold_s=stall_threshold_s(args),
            agent_mode=args.agent_mode,
        )
    with opened_workflow(args) as inputs:
        engine = inputs.engine
        result = asyncio.run(
            runtime.run_rollout(
                inputs.workflow,
                inputs.rows,
                engine,
                workflow_kwargs=inputs.kwargs,
                config=config,
                tokenizer=getattr(engine, "tokenizer", None),
            )
        )
    tokenizer = getattr(engine, "tokenizer", None)
    print_results(result, tokenizer, show=args.show, table=args.table)
    if cache_line := prefix_cache_line(engine):
        print(cache_line)
    if args.output:
        write_output(result, Path(args.output))
    if args.html:
        from areal_devkit.viewer import episodes_from_records, write_page

        write_page(episodes_from_records(result.episodes), Path(args.html), tokenizer)
        print(f"wrote {args.html}")
    return exit_status(result.report, args)


# The workflow chose to drop these (AReaL's ``None``, should_accept_fn): not failures.
DELIBERATE_DROPS = ("none", "should_accept")


def exit_status(report: Any, args: argparse.Namespace) -> int:
    """1, with the reason on stderr, when an episode failed or the workflow stalled the loop."""
    failed = sum(
        n for reason, n in report.rejected_by_reason.items() if reason not in DELIBERATE_DROPS
    )
    reasons: list[str] = []
    if report.accepted == 0:
        reasons.append("no episode was accepted")
    elif failed and not args.allow_rejected:
        reasons.append(
            f"{failed} of {report.episodes} episodes were rejected (see above; "
            "--allow-rejected to exit 0 anyway)"
        )
    if args.fail_on_stall and report.workflow_stalls:
        reasons.append(f"the workflow stalled the event loop {report.workflow_stalls} time(s)")
    for reason in reasons:
        print(f"areal-devkit run: exit 1: {reason}", file=sys.stderr)
    return 1 if reasons else 0


def print_results(result: Any, tokenizer: Any, *, show: int = 3, table: bool = False) -> None:
    """Totals, then sample episodes as text, then rejections; the table on request."""
    print(result.report.format())
    accepted = [r for r in result.episodes if r.accepted and r.trajectory is not None]
    if accepted and show:
        picked = sample_episodes(accepted, show)
        print(f"\n-- {len(picked)} of {len(accepted)} accepted episodes --")
        for record in picked:
            print(format_episode(record, tokenizer))
    noted = [r for r in result.episodes if r.notes]
    if noted:
        print(f"\n-- {len(noted)} episodes with notes --")
        for record in noted:
            print(f"episode {record.index}")
            print("\n".join(f"  {line}" for line in record.notes))
    rejected = [r for r in result.episodes if not r.accepted]
    if rejected:
        print(f"\n-- {len(rejected)} rejected episodes --")
        for group in same_rejections(rejected):
            print(format_rejection(group[0], also=[r.index for r in group[1:]]))
    if table or len(result.episodes) <= SMALL_RUN:
        print()
        print_table(result.episodes)


def sample_episodes(accepted: list[Any], n: int) -> list[Any]:
    """``n`` episodes in order, at random but always with the lowest-reward one among them."""
    picked = random.Random(0).sample(accepted, min(n, len(accepted)))
    rewarded = [r for r in accepted if r.reward is not None]
    worst = min(rewarded, key=lambda r: r.reward) if rewarded else None
    if worst is not None and worst not in picked and any(r.reward != worst.reward for r in picked):
        picked[-1] = worst
    return sorted(picked, key=lambda r: r.index)


def format_episode(record: Any, tokenizer: Any) -> str:
    from areal_devkit.trajectory_text import format_row, rows_of

    rows = rows_of(record.trajectory)
    reward = "-" if record.reward is None else f"{record.reward:.3f}"
    lines = [f"episode {record.index}  reward {reward}  {record.generated_tokens} tokens trained"]
    for number, row in enumerate(rows, start=1):
        if len(rows) > 1:
            lines.append(f"  [sequence {number} of {len(rows)}, reward {row.reward}]")
        lines.extend(format_row(row, tokenizer))
    return "\n".join(lines)


def same_rejections(rejected: list[Any]) -> list[list[Any]]:
    """Rejected episodes grouped by reason and error (object addresses aside), in order."""
    import re

    groups: dict[str, list[Any]] = {}
    for record in rejected:
        key = re.sub(r" at 0x[0-9a-fA-F]+", "", f"{record.reason}|{record.error}")
        groups.setdefault(key, []).append(record)
    return list(groups.values())


def format_rejection(record: Any, also: list[int] | None = None) -> str:
    """The traceback's tail, and the user's own line when the tail does not reach it."""
    error = (record.error or "").strip().splitlines()
    head = error[-TRACEBACK_HEAD:] if len(error) > TRACEBACK_HEAD else error
    same = f", and {len(also)} more the same way: {', '.join(map(str, also))}" if also else ""
    lines = [f"episode {record.index}  rejected ({record.reason}){same}"]
    lines += [f"  {line}" for line in head]
    summary = runtime.summarize_traceback(record.error or "")
    path, _, lineno = summary.where.rsplit(" in ", 1)[0].rpartition(":")
    if summary.users and f'"{path}", line {lineno},' not in "\n".join(head):
        source = f": {summary.source}" if summary.source else ""
        lines.append(f"  raised from your code at {summary.where}{source}")
    return "\n".join(lines)


def print_table(episodes: list[Any]) -> None:
    header = ("episode", "accepted", "reward", "length", "trained", "latency ms")
    print("  ".join(f"{h:>10}" for h in header))
    for record in episodes:
        cells = (
            str(record.index),
            "yes" if record.accepted else f"no:{record.reason}",
            "-" if record.reward is None else f"{record.reward:.3f}",
            str(record.sequence_length),
            str(record.generated_tokens),
            f"{record.latency_s * 1000:.1f}",
        )
        print("  ".join(f"{c:>10}" for c in cells))


def write_output(result: Any, path: Path) -> None:
    """Write trajectories atomically: a half-written file never replaces a good one."""
    if path.suffix == ".pt":
        import torch

        with atomic_open(path, "wb") as f:
            torch.save(result.batch, f)
    else:
        write_episodes(path, [episode_record(record) for record in result.episodes])
    print(f"wrote {path}")


def episode_record(record: Any, step: int | None = None) -> EpisodeRecord:
    """A rollout's episode (``RolloutResult.episodes``) as a line of the trajectory JSONL."""
    return EpisodeRecord(
        episode=record.index,
        accepted=record.accepted,
        reward=record.reward,
        reason=record.reason,
        error=record.error,
        tensors=tensors_as_lists(record.trajectory or {}),
        step=step,
    )
