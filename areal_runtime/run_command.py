# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit run``: run a workflow over a JSONL dataset and print a results table.

With no options it runs on the embedded default model and the bundled arithmetic dataset, so a
fresh machine needs nothing else. Constructor arguments named ``tokenizer``, ``gconfig`` and
``reward_fn`` are filled in when the workflow needs them and ``--kwargs`` does not give them.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> None:
    p = commands.add_parser("run", help="run a workflow over a dataset and report the results")
    p.add_argument("workflow", help="pkg.module:Class, pkg.module.Class or path/to/file.py:Class")
    p.add_argument("--data", help="JSONL dataset (default: the bundled arithmetic sample)")
    p.add_argument(
        "--engine", default="local", help="local | hf:PATH | scripted | sglang:ADDR | vllm:ADDR"
    )
    p.add_argument("--kwargs", default="{}", help="workflow constructor kwargs as JSON")
    p.add_argument("--limit", type=int, help="run only the first N rows")
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--group-size", type=int, default=1)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--temperature", type=float, default=0.0, help="0 means greedy")
    p.add_argument("--eval", action="store_true", help="set WorkflowContext.is_eval")
    p.add_argument(
        "--validate", action="store_true", help="reject trajectories that break the contract"
    )
    p.add_argument(
        "--stall-threshold-ms", type=float, default=50.0, help="0 turns the detector off"
    )
    p.add_argument("--fail-on-stall", action="store_true", help="exit 1 if the event loop stalled")
    p.add_argument("--output", help="write trajectories: .pt (torch.save of the batch) or .jsonl")
    p.set_defaults(handler=run)


def _load_rows(path: str | None, limit: int | None) -> list[dict[str, Any]]:
    from areal_runtime.infra.workflow_executor import iter_dataset
    from areal_runtime.models.default_model import sample_dataset_path

    rows = []
    for row in iter_dataset(path or sample_dataset_path()):
        if limit is not None and len(rows) >= limit:
            break
        rows.append(row)
    if not rows:
        raise ValueError(f"dataset {path or sample_dataset_path()} has no rows")
    return rows


def workflow_kwargs_for(
    workflow: Any, given: dict[str, Any], engine: Any, args: Any
) -> dict[str, Any]:
    """``given`` plus defaults for the usual AReaL constructor arguments the workflow takes."""
    from areal_runtime.api.cli_args import GenerationHyperparameters
    from areal_runtime.utils.dynamic_import import import_from_string

    kwargs = dict(given)
    if isinstance(kwargs.get("reward_fn"), str):
        kwargs["reward_fn"] = import_from_string(kwargs["reward_fn"])
    if not inspect.isclass(workflow):
        return kwargs
    params = inspect.signature(workflow).parameters
    if "tokenizer" in params and "tokenizer" not in kwargs:
        kwargs["tokenizer"] = engine.tokenizer
    if "gconfig" in params and "gconfig" not in kwargs:
        kwargs["gconfig"] = GenerationHyperparameters(
            max_new_tokens=args.max_new_tokens,
            temperature=args.temperature,
            greedy=args.temperature == 0,
        )
    reward = params.get("reward_fn")
    if (
        reward is not None
        and reward.default is inspect.Parameter.empty
        and "reward_fn" not in kwargs
    ):
        if args.data:
            raise ValueError(
                f'{workflow.__name__} needs reward_fn: pass --kwargs \'{{"reward_fn": "pkg.module.fn"}}\''
            )
        from areal_runtime.models.default_model import arithmetic_reward

        kwargs["reward_fn"] = arithmetic_reward
    return kwargs


def run(args: argparse.Namespace) -> int:
    from areal_runtime.engine.factory import engine_from_spec
    from areal_runtime.infra.workflow_executor import run_rollout
    from areal_runtime.infra.workflow_resolution import load_object

    try:
        given = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--kwargs is not valid JSON: {exc.msg}") from None
    if not isinstance(given, dict):
        raise ValueError("--kwargs must be a JSON object")
    workflow = load_object(args.workflow)
    rows = _load_rows(args.data, args.limit)
    engine = engine_from_spec(args.engine, rows=rows)
    try:
        kwargs = workflow_kwargs_for(workflow, given, engine, args)
        result = asyncio.run(
            run_rollout(
                workflow,
                rows,
                engine,
                workflow_kwargs=kwargs if inspect.isclass(workflow) else None,
                concurrency=args.concurrency,
                group_size=args.group_size,
                is_eval=args.eval,
                validate=args.validate,
                stall_threshold_s=args.stall_threshold_ms / 1000 or None,
                tokenizer=getattr(engine, "tokenizer", None),
            )
        )
    finally:
        close = getattr(engine, "close", None)
        if close is not None:
            close()
    print_results(result)
    if args.output:
        write_output(result, Path(args.output))
    if result.report.accepted == 0:
        return 1
    return 1 if args.fail_on_stall and result.report.stalls else 0


def print_results(result: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="areal-devkit run")
    for column in ("episode", "accepted", "reward", "length", "generated", "latency ms", "note"):
        table.add_column(column, justify="right" if column != "note" else "left")
    for record in result.episodes[:50]:
        note = (
            ""
            if record.accepted
            else f"{record.reason}: {(record.error or '').strip().splitlines()[-1][:60]}"
        )
        table.add_row(
            str(record.index),
            "yes" if record.accepted else "no",
            "-" if record.reward is None else f"{record.reward:.3f}",
            str(record.sequence_length),
            str(record.generated_tokens),
            f"{record.latency_s * 1000:.1f}",
            note,
        )
    console = Console()
    console.print(table)
    if len(result.episodes) > 50:
        console.print(f"... {len(result.episodes) - 50} more episodes")
    console.print(result.report.format(), markup=False, highlight=False)


def write_output(result: Any, path: Path) -> None:
    """Write trajectories atomically: a half-written file never replaces a good one."""
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".pt":
        import torch

        torch.save(result.batch, tmp)
    elif path.suffix == ".jsonl":
        with tmp.open("w", encoding="utf-8") as f:
            for record in result.episodes:
                traj = record.trajectory or {}
                f.write(
                    json.dumps(
                        {
                            "episode": record.index,
                            "accepted": record.accepted,
                            "reward": record.reward,
                            "reason": record.reason,
                            **{k: v.tolist() for k, v in traj.items() if hasattr(v, "tolist")},
                        }
                    )
                    + "\n"
                )
    else:
        raise ValueError(f"--output must end in .pt or .jsonl, got {path.name}")
    tmp.replace(path)
    print(f"wrote {path}")
