# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit train``: asynchronous GRPO on a workflow, on this machine, in minutes.

A thin command over :class:`areal_runtime.trainer.PPOTrainer`: the config loads through
``load_expr_config`` as in AReaL's scripts (``--config`` or the defaults, the flags and
``KEY=VALUE`` as overrides: see ``train_config``), each step's metrics go to ``--metrics-out``
(JSONL) and a progress bar, and the run ends with a reward table, ``--plot`` and ``--save``.
With no ``--data`` it trains the bundled default task (arithmetic, from an under-confident
checkpoint) so learning is visible.
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.commands.train_config import (
    default_epochs,
    flag_table,
    flags_from_config,
    is_override,
    load_train_config,
)
from areal_devkit.commands.workflow_args import (
    accepts,
    add_stall_threshold_argument,
    add_workflow_arguments,
    load_rows,
    parse_kwargs,
    passes_tools,
    stall_threshold_s,
    takes_images,
    workflow_kwargs_for,
)
from areal_devkit.engine_summary import prefix_cache_line
from areal_devkit.errors import UsageError, usage_errors
from areal_devkit.training_report import Reporter, print_summary, stall_warning

EXAMPLES = """examples:
  areal-devkit train examples.arithmetic_rlvr:ArithmeticRLVRWorkflow     # the default task
  areal-devkit train examples.arithmetic_rlvr:ArithmeticRLVRWorkflow --steps 40 \\
      --metrics-out m.jsonl --plot reward.png --save ckpt/
  areal-devkit train mypkg.workflow.math:MathWorkflow --data train.jsonl \\
      --kwargs '{"reward_fn": "mypkg.reward.fn"}' --engine hf:./my-model
  areal-devkit train areal_runtime.workflow.openai.math_agent.MathAgent \\
      --config examples/agent_workflow/config_laptop.yaml total_train_steps=20 --lr 1e-4
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "train",
        help="train a model with asynchronous GRPO on a workflow's trajectories",
        description="Asynchronous GRPO (AReaL's decoupled PPO loss, staleness-bounded rollouts) "
        "on a local model. Without --data: the bundled arithmetic task from an under-confident "
        "start, where the reward visibly rises within a minute. The config loads as AReaL's "
        "scripts load theirs (load_expr_config): --config FILE.yaml, or the bundled task's "
        "defaults, then the flags and KEY=VALUE overrides on top.",
        epilog=EXAMPLES + "\n" + flag_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workflow_arguments(p, max_new_tokens=None)
    p.set_defaults(engine=None, group_size=None, temperature=None)
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="Hydra overrides as in AReaL's scripts: actor.optimizer.lr=1e-4, +key=value, ~key",
    )
    p.add_argument(
        "--config",
        metavar="FILE.yaml",
        help="an AReaL experiment YAML (GRPOConfig keys); its actor.path and train_dataset.path "
        "are used unless --engine or --data is given. Default: the bundled task's settings",
    )
    p.add_argument("--steps", type=int, help="training steps (weight updates); default 100")
    p.add_argument("--batch-size", type=int, help="groups (dataset rows) per step; default 8")
    p.add_argument(
        "--lr",
        type=float,
        help="learning rate (AdamW); default 3e-4, 1e-4 for a tool agent on the embedded model",
    )
    p.add_argument(
        "--max-staleness",
        type=int,
        help="AReaL's max_head_offpolicyness: how many versions old a trained token may be; "
        "default 1",
    )
    p.add_argument("--seed", type=int, help="default 1")
    p.add_argument("--minibatches", type=int, help="optimizer steps per step; default 2")
    p.add_argument("--eps-clip", type=float, help="default 0.2")
    p.add_argument("--kl-ctl", type=float, help="KL penalty to the start weights; default 0")
    p.add_argument("--metrics-out", metavar="FILE.jsonl", help="one JSON object per step")
    p.add_argument(
        "--fileroot",
        help="AReaL's cluster.fileroot: statistics go to FILEROOT/logs/USER/EXPERIMENT/TRIAL/"
        "stats.jsonl (and TensorBoard events), recover checkpoints under FILEROOT/checkpoints; "
        "default /tmp/areal/experiments",
    )
    p.add_argument("--experiment-name", help="default areal-devkit-train")
    p.add_argument(
        "--trial-name",
        help="default: run-<date>-<time>-<pid>; name it to resume a run with --recover-every",
    )
    p.add_argument(
        "--recover-every",
        type=int,
        default=0,
        metavar="N",
        help="write a recover checkpoint every N steps (recover.mode=auto): running the same "
        "command again after a crash or kill resumes from it",
    )
    p.add_argument("--plot", metavar="FILE.png", help="reward curve and training figures")
    p.add_argument("--save", metavar="DIR", help="save the trained model (HF folder) here")
    p.add_argument("--save-every", type=int, default=10, metavar="N", help="also every N steps")
    p.add_argument(
        "--output",
        metavar="FILE.jsonl",
        help="the last steps' trajectories, for `areal-devkit view` (default: next to --save)",
    )
    p.add_argument("--last-steps", type=int, default=1, help="how many final steps --output keeps")
    p.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="train even if the first batch disagrees with what the engine sampled",
    )
    add_stall_threshold_argument(p, 100.0, "warn")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-step lines")
    p.set_defaults(handler=train, is_override=is_override)


def check_args(args: argparse.Namespace) -> None:
    """Every flag problem before minutes of work: exit 2 with the fix.

    Run on the flags as given (None: not given) and again on the loaded config's values.
    """
    for name in ("steps", "batch_size", "group_size", "minibatches", "last_steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must be >= 1, got {value}")
    if args.max_new_tokens is not None and args.max_new_tokens < 1:
        raise UsageError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}")
    if args.max_staleness is not None and args.max_staleness < 0:
        raise UsageError(f"--max-staleness must be >= 0, got {args.max_staleness}")
    if args.save_every < 0:
        raise UsageError(f"--save-every must be >= 0, got {args.save_every}")
    if args.recover_every < 0:
        raise UsageError(f"--recover-every must be >= 0, got {args.recover_every}")
    if args.recover_every and not args.trial_name and not args.config:
        raise UsageError(
            "--recover-every needs --trial-name NAME: a re-run resumes the trial of that name"
        )
    if args.lr is not None and not (args.lr > 0 and math.isfinite(args.lr)):
        raise UsageError(f"--lr must be a positive number, got {args.lr}")
    if args.temperature is not None and not args.temperature > 0:
        raise UsageError(
            f"--temperature must be > 0 for training (GRPO needs sampled groups), got "
            f"{args.temperature}"
        )
    if args.save:
        with usage_errors():
            runtime.check_writable(args.save)
    for flag, value, suffix in (
        ("--metrics-out", args.metrics_out, ".jsonl"),
        ("--plot", args.plot, ".png"),
        ("--output", args.output, ".jsonl"),
    ):
        if not value:
            continue
        if Path(value).suffix != suffix:
            raise UsageError(f"{flag} must end in {suffix}, got {value}")
        parent = Path(value).resolve().parent
        if not parent.is_dir():
            raise UsageError(f"{flag} {value}: the folder {parent} does not exist; create it first")
        if not _writable(parent):
            raise UsageError(f"{flag} {value}: no permission to write in {parent}")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError:
            raise UsageError(
                "--plot needs matplotlib: pip install 'areal-devkit[train]' (or matplotlib)"
            ) from None


def _writable(folder: Path) -> bool:
    import os

    return os.access(folder, os.W_OK | os.X_OK)


def default_task_rows(images: bool = False) -> list[dict[str, Any]]:
    """The default task: every "What is a+b?" with 0 <= a, b <= 30 (961 rows), each with a
    picture of the two numbers for a vision workflow."""
    rows = []
    for a in range(runtime.MAX_OPERAND + 1):
        for b in range(runtime.MAX_OPERAND + 1):
            row = {"messages": runtime.question(a, b), "answer": str(a + b)}
            rows.append(runtime.with_image(row, runtime.sample_image(a, b)) if images else row)
    return rows


# Where a tool agent starts with no --engine; it also learns at runtime.TOOL_AGENT_LR by default.
TOOL_AGENT_START = "the under-confident default model (logits x0.55)"


def make_engine(
    spec: str | None,
    data: bool,
    seed: int,
    tool_agent: bool = False,
    actor_path: str | None = None,
) -> tuple[Any, str]:
    """A LocalEngine for ``spec`` and a description of the starting weights.

    With no ``--engine``: the config's ``actor.path`` when ``--config`` names one; else the
    bundled task starts from the under-confident arithmetic model, a tool agent from the
    default model flattened less (``load_underconfident_model``), and a task of your own
    (``--data``) from the shipped weights.
    """
    if spec is None and actor_path:
        kind = runtime.EMBEDDED_NAMES.get(actor_path)
        spec = {"default": "local", "underconfident": "underconfident"}.get(
            kind or "", f"hf:{actor_path}"
        )
    if spec is None:
        spec = "local" if data else "underconfident"
    if spec == "underconfident":
        model, tokenizer = runtime.load_underconfident_model(tool_agent=tool_agent)
        engine = runtime.LocalEngine(model, tokenizer, seed=seed)
        if tool_agent:
            return engine, TOOL_AGENT_START
        return engine, "the under-confident arithmetic model"
    if spec == "local":
        return runtime.LocalEngine.default(seed=seed), "the embedded default model"
    if spec.startswith("hf:") and spec[3:]:
        return runtime.LocalEngine.from_pretrained(spec[3:], seed=seed), spec[3:]
    raise UsageError(
        f"--engine {spec!r} cannot be trained here: training loads new weights into the engine "
        "between decode steps, which only a local engine can do; use local, underconfident or "
        "hf:PATH"
    )


def config_dataset(args: argparse.Namespace, config: Any) -> str | None:
    """The YAML's train_dataset.path, used when ``--config`` is given and ``--data`` is not."""
    if args.config is None or args.data:
        return None
    return config.train_dataset.path or None


def train(args: argparse.Namespace) -> int:
    check_args(args)  # the flags as given, before anything loads
    stall_threshold = stall_threshold_s(args)
    lr_chosen = (
        args.lr is not None
        or args.config is not None
        or any("optimizer.lr" in override for override in args.overrides)
    )
    config = load_train_config(args)  # a bad key or value: exit 2 before any model loads
    flags_from_config(config, args)
    check_args(args)  # the values the config file gave
    given = parse_kwargs(args.kwargs)
    yaml_data = config_dataset(args, config)
    with usage_errors():  # the spec and the dataset are the user's input
        workflow = runtime.load_object(args.workflow)
        if args.data:
            rows = load_rows(args.data, args.limit)
        elif not yaml_data:
            rows = default_task_rows(images=takes_images(workflow))
    if args.limit and not args.data and not yaml_data:
        rows = rows[: args.limit]
    with usage_errors():
        engine, start_desc = make_engine(
            args.engine,
            bool(args.data or yaml_data),
            args.seed,
            tool_agent=passes_tools(workflow),
            actor_path=config.actor.path if args.config else None,
        )
        if start_desc == TOOL_AGENT_START and not lr_chosen:
            config.actor.optimizer.lr = args.lr = runtime.TOOL_AGENT_LR
        if yaml_data:
            rows = runtime.get_custom_dataset("train", config.train_dataset, engine.tokenizer)
            rows = rows[: args.limit] if args.limit else rows
        # A dataset of the user's (flag or YAML): its reward is not assumed to be arithmetic.
        as_data = argparse.Namespace(**{**vars(args), "data": args.data or yaml_data})
        kwargs = workflow_kwargs_for(workflow, given, engine, as_data)
    if config.max_turns is not None and accepts(workflow, "max_turns") and "max_turns" not in given:
        kwargs["max_turns"] = config.max_turns  # AReaL's agent example passes it the same way
    if "gconfig" in kwargs and hasattr(kwargs["gconfig"], "new"):
        kwargs["gconfig"] = kwargs["gconfig"].new(temperature=args.temperature, greedy=False)
    default_epochs(config, len(rows), args)
    if args.config:  # the file's epochs may end the run before total_train_steps (or set none)
        with usage_errors():
            args.steps = runtime.total_steps_of(config, len(rows))
    out = (
        Path(args.output)
        if args.output
        else (Path(args.save) / "trajectories.jsonl" if args.save else None)
    )
    reporter = Reporter(args, config)
    trainer = runtime.PPOTrainer(config, rows, engine=engine)
    source = f" ({args.config})" if args.config else ""
    print(
        f"training {getattr(workflow, '__name__', workflow)} from {start_desc}{source}: "
        f"{args.steps} steps x {args.batch_size} groups x {args.group_size} samples, "
        f"lr {args.lr:g}, max staleness {args.max_staleness}",
        file=sys.stderr,
    )
    last: list[Any] = []
    try:
        with trainer, reporter:

            def on_step(result: Any) -> None:
                last.append(result)
                del last[: -args.last_steps]
                reporter.step(result)
                step = result.metrics["step"]
                if (
                    args.save
                    and args.save_every
                    and step % args.save_every == 0
                    and step < args.steps
                ):
                    trainer.save(args.save, step=step, metrics=result.metrics)

            trainer.train(
                workflow=workflow,
                workflow_kwargs=kwargs if inspect.isclass(workflow) else None,
                allow_mismatch=args.allow_mismatch,
                on_step=on_step,
                console=False,  # the progress bar and the summary table below instead
                stall_threshold_s=stall_threshold,
            )
    except runtime.ConsistencyError as exc:
        print(f"areal-devkit train: {exc}", file=sys.stderr)
        return 1
    except runtime.TrainingInputError as exc:  # the workflow's or the dataset's shape: user's
        raise UsageError(str(exc)) from exc
    except BaseException:
        # Interrupted or failed: the last periodic checkpoint stays as it was; keep what we have.
        if args.output and last:
            write_trajectories(last, Path(args.output))
        raise
    finally:
        reporter.finish(stats_file(config))
    if trainer.consistency is not None:
        print("consistency check of the first batch: " + trainer.consistency.summary())
    if args.save:
        trainer.save(args.save, step=len(trainer.history), metrics=trainer.history[-1].metrics)
        print(f"saved {args.save} (load it with LocalEngine.from_pretrained or transformers)")
    if out is not None and last:
        write_trajectories(last, out)
    if cache_line := prefix_cache_line(engine):
        print(cache_line)
    print_summary(trainer.history, rerun=rerun_command(args))
    if warning := stall_warning(trainer.loop_stalls):
        print(warning, file=sys.stderr)
    return 0


def rerun_command(args: argparse.Namespace) -> str:
    """``areal-devkit run`` on the same workflow, data and flags, to see rejections in full."""
    import shlex

    parts = ["areal-devkit", "run", args.workflow]
    if args.data:
        parts += ["--data", args.data]
    if args.kwargs not in ("", "{}"):
        parts += ["--kwargs", args.kwargs]
    parts += [
        "--temperature",
        f"{args.temperature:g}",
        "--max-new-tokens",
        str(args.max_new_tokens),
    ]
    return shlex.join(parts)


def stats_file(config: Any) -> Path:
    """Where the stats logger wrote this run's statistics (what --plot and view read)."""
    s = config.stats_logger
    return runtime.log_dir(s.fileroot, s.experiment_name, s.trial_name) / runtime.STATS_FILE


def write_trajectories(results: list[Any], path: Path) -> None:
    """The last steps' groups, one line each, in ``areal-devkit run --output``'s format."""
    from areal_devkit.commands.run import episode_record
    from areal_devkit.episode_record import write_episodes

    path.parent.mkdir(parents=True, exist_ok=True)
    records = [
        episode_record(record, step=result.metrics["step"])
        for result in results
        for record in result.records
    ]
    write_episodes(path, records)
    print(f"wrote {path} (view it: areal-devkit view {path})")
