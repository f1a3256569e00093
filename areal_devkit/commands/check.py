# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit check``: train-inference consistency of a workflow, on a CPU, in a minute.

The costliest agentic-RL bugs (re-tokenized completions, shifted or placeholder logprobs,
prompt tokens trained, histories that are not prefixes, wrong versions) only show up as a
diverging run on a GPU cluster. ``check`` runs the workflow on a recording engine and compares
every trajectory with what the engine actually sampled, and with a teacher-forced forward pass.
"""

from __future__ import annotations

import argparse
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.commands.workflow_args import (
    add_seed_argument,
    add_stall_threshold_argument,
    add_workflow_arguments,
    opened_workflow,
    stall_threshold_s,
)
from areal_devkit.errors import UsageError

EXAMPLES = """examples:
  areal-devkit check examples.arithmetic_rlvr:ArithmeticRLVRWorkflow --limit 4
  areal-devkit check mypkg.workflow.multi_turn:MultiTurnWorkflow --data train.jsonl --limit 16
  areal-devkit check my_agent.py:MyAgent --temperature 0.7 --group-size 2
  areal-devkit check mypkg.workflow.math:MathWorkflow --engine hf:./my-model --atol 1e-4

exit status: 0 every trajectory passed, 1 a check failed (or no episode could be checked, or
the workflow's code blocked the event loop), 2 usage error. Logprob parity with the model needs
a LocalEngine (--engine local or hf:PATH); with other engines the token, mask, version and
engine-logprob checks still run.
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "check",
        help="check train-inference consistency: tokens, logprobs, masks, versions",
        description="Run a workflow on a real model and check every trajectory against what the "
        "engine sampled: trained tokens are the sampled tokens (EOS included), logprobs equal "
        "the engine's and a teacher-forced forward pass, only sampled tokens are in the loss "
        "mask, each turn's prompt extends the last, versions are the engine's; and that the "
        "workflow's code never blocks the event loop every episode shares.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workflow_arguments(p)
    p.add_argument(
        "--atol", type=float, default=1e-3, help="logprob tolerance (default: 1e-3, fp32 CPU)"
    )
    p.add_argument(
        "--allow-untrained",
        action="store_true",
        help="accept sampled completions that no trajectory row trains (deliberate filtering)",
    )
    p.add_argument("--concurrency", type=int, default=16)
    add_stall_threshold_argument(p, 100.0, "fail")
    add_seed_argument(p)
    p.add_argument(
        "--max-problems", type=int, default=5, metavar="N", help="problems shown per episode"
    )
    p.set_defaults(handler=check)


def check(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(1)
    if args.atol <= 0:
        raise UsageError(f"--atol must be > 0, got {args.atol}")
    if args.concurrency < 1 or args.max_problems < 1:
        raise UsageError("--concurrency and --max-problems must be >= 1")
    stall_threshold = stall_threshold_s(args)
    with opened_workflow(args) as inputs:
        report = runtime.check_workflow(
            inputs.workflow,
            inputs.rows,
            inputs.engine,
            workflow_kwargs=inputs.kwargs,
            group_size=args.group_size,
            concurrency=args.concurrency,
            atol=args.atol,
            allow_untrained=args.allow_untrained,
            stall_threshold_s=stall_threshold,
        )
    print(report.format(max_per_episode=args.max_problems))
    return 0 if report.ok else 1
