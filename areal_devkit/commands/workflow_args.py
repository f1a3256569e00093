# SPDX-License-Identifier: Apache-2.0
"""What ``run``, ``check`` and ``train`` share: the workflow spec, its dataset and its engine.

Constructor arguments named ``tokenizer``, ``gconfig`` and ``reward_fn`` are filled in when the
workflow needs them and ``--kwargs`` does not give them, so a template-generated workflow runs
with no options on the embedded default model and the bundled arithmetic dataset.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import json
import math
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.errors import UsageError, usage_errors


def add_workflow_arguments(p: argparse.ArgumentParser, *, max_new_tokens: int | None = 32) -> None:
    p.add_argument("workflow", help="pkg.module:Class, pkg.module.Class or path/to/file.py:Class")
    p.add_argument("--data", help="JSONL dataset (default: the bundled arithmetic sample)")
    p.add_argument("--engine", default="local", help=runtime.ENGINE_SPECS)
    p.add_argument("--kwargs", default="{}", help="workflow constructor kwargs as JSON")
    p.add_argument("--limit", type=int, help="use only the first N rows")
    p.add_argument("--group-size", type=int, default=1, help="episodes per row (GRPO group)")
    p.add_argument("--max-new-tokens", type=int, default=max_new_tokens)
    p.add_argument("--temperature", type=float, default=0.0, help="0 means greedy")


def add_seed_argument(p: argparse.ArgumentParser) -> None:
    """``--seed`` for the commands that sample on a local engine without training it."""
    p.add_argument(
        "--seed",
        type=int,
        help="the local engine's sampling seed (default 0); another seed draws other episodes "
        "(one seed repeats a run only where its requests are batched alike: episodes that run "
        "side by side share the engine's batches, and a busy machine changes how)",
    )


def add_stall_threshold_argument(p: argparse.ArgumentParser, default_ms: float, does: str) -> None:
    """``--stall-threshold-ms`` of ``run``, ``check`` and ``train``: what each ``does`` with the
    workflow's stalls differs (count, fail, warn), the verdict is the same detector's."""
    p.add_argument(
        "--stall-threshold-ms",
        type=float,
        default=default_ms,
        help=f"{does} when the workflow's code blocks the event loop this long (default: "
        f"{default_ms:g}; first-use set-up, the runtime's own work and a busy machine's waits "
        "do not count); 0 turns the detector off",
    )


def stall_threshold_s(args: argparse.Namespace) -> float | None:
    """The detector's threshold in seconds, None when it is off."""
    if args.stall_threshold_ms < 0:
        raise UsageError(
            f"--stall-threshold-ms must be >= 0 (0 turns it off), got {args.stall_threshold_ms}"
        )
    return args.stall_threshold_ms / 1000 or None


def engine_seed(args: argparse.Namespace) -> dict[str, int]:
    """The engine factory's ``seed`` argument for ``--seed`` ({} without it), refused for the
    engines whose sampling it cannot reach, before any model loads."""
    seed = getattr(args, "seed", None)
    if seed is None:
        return {}
    if args.engine.startswith(("sglang:", "vllm:")):
        raise UsageError(
            "--seed sets the local engine's sampling; an SGLang or vLLM server samples with its "
            "own seed (start it with --random-seed / --seed)"
        )
    if args.engine.startswith("scripted"):
        raise UsageError("--seed sets the local engine's sampling; --engine scripted samples "
                         "nothing (it replays each row's answer)")  # fmt: skip
    return {"seed": seed}


def check_generation_args(args: argparse.Namespace) -> None:
    """Refuse sampling flags every episode would fail on, before any model loads."""
    if args.max_new_tokens < 1:
        raise UsageError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}")
    if not math.isfinite(args.temperature) or args.temperature < 0:
        raise UsageError(f"--temperature must be a finite number >= 0, got {args.temperature}")


def parse_kwargs(text: str) -> dict[str, Any]:
    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--kwargs is not valid JSON: {exc.msg}") from None
    if not isinstance(given, dict):
        raise UsageError("--kwargs must be a JSON object, e.g. '{\"max_turns\": 2}'")
    return given


def takes_images(workflow: Any) -> bool:
    """A vision workflow: its constructor takes a ``processor`` (AReaL's convention)."""
    target = workflow if inspect.isclass(workflow) else type(workflow)
    try:
        return "processor" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def accepts(workflow: Any, name: str) -> bool:
    """Whether a workflow class's constructor has a parameter called ``name``."""
    if not inspect.isclass(workflow):
        return False
    try:
        return name in inspect.signature(workflow).parameters
    except (TypeError, ValueError):
        return False


def passes_tools(workflow: Any) -> bool:
    """A tool agent: its class passes ``tools=`` to some call (an Agents SDK ``Agent``, a
    Messages or chat request). Read from the source, so nothing runs to find out."""
    import ast
    import textwrap

    target = workflow if inspect.isclass(workflow) else type(workflow)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(
        isinstance(node, ast.Call) and any(k.arg == "tools" for k in node.keywords)
        for node in ast.walk(tree)
    )


def default_dataset(workflow: Any) -> Any:
    """The bundled dataset a workflow runs on with no ``--data``: images for a vision one."""
    if takes_images(workflow):
        return runtime.vision_sample_path()

    return runtime.sample_dataset_path()


def load_rows(path: Any, limit: int | None) -> list[dict[str, Any]]:
    """Rows of a JSONL file; ``images`` given as paths (relative to the file) or base64 are
    opened as PIL images, as AReaL's vision datasets give them."""
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be >= 1, got {limit}")
    rows = []
    for row in runtime.iter_dataset(path):
        if limit is not None and len(rows) >= limit:
            break
        images = row.get("images")
        if isinstance(images, list) and any(isinstance(i, str) for i in images):
            row = {**row, "images": [runtime.load_image(i, Path(path).parent) for i in images]}
        rows.append(row)
    if not rows:
        raise UsageError(f"dataset {path} has no rows")
    return rows


def reward_call(workflow: Any) -> str:
    """How this kind of workflow calls its reward, as AReaL does."""
    if hasattr(workflow, "arun_episode"):
        return "fn(prompt, completions, prompt_ids, completion_ids, **row)"
    return "fn(completions=final_answer, **row)"


def workflow_kwargs_for(
    workflow: Any, given: dict[str, Any], engine: Any, args: argparse.Namespace
) -> dict[str, Any]:
    """``given`` plus defaults for the usual AReaL constructor arguments the workflow takes."""
    kwargs = dict(given)
    if isinstance(kwargs.get("reward_fn"), str):
        kwargs["reward_fn"] = runtime.load_object(kwargs["reward_fn"])
    if not inspect.isclass(workflow):
        return kwargs
    params = inspect.signature(workflow).parameters
    kwargs.update(dataclass_arguments(workflow, kwargs))
    if "tokenizer" in params and "tokenizer" not in kwargs:
        kwargs["tokenizer"] = engine.tokenizer
    if "processor" in params and kwargs.get("processor") is None:
        kwargs["processor"] = default_processor(engine)
    if "gconfig" in params and "gconfig" not in kwargs:
        kwargs["gconfig"] = runtime.GenerationHyperparameters(
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
            raise UsageError(
                f'{workflow.__name__} needs reward_fn: pass --kwargs \'{{"reward_fn": "pkg.module.fn"}}\''
                f" (with your own dataset the bundled arithmetic reward is not assumed); it is called "
                f"as {reward_call(workflow)}, every row key but messages as a keyword: see "
                "docs/own_project.md"
            )
        kwargs["reward_fn"] = runtime.arithmetic_reward
    check_constructible(workflow, kwargs)
    return kwargs


def check_constructible(workflow: type, kwargs: dict[str, Any]) -> None:
    """A constructor argument missing or unknown is the user's --kwargs, not a crash: say so
    before any episode starts, naming what the class takes."""
    try:
        signature = inspect.signature(workflow)
        params = signature.parameters
        signature.bind(**kwargs)
    except ValueError:  # a signature that cannot be read: let the constructor decide
        return
    except TypeError as exc:
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        missing = [
            n
            for n, p in params.items()
            if p.kind in named and p.default is p.empty and n not in kwargs
        ]
        open_ended = any(p.kind is p.VAR_KEYWORD for p in params.values())
        unknown = [] if open_ended else [k for k in kwargs if k not in params]
        problems = [f"needs {', '.join(missing)}"] if missing else []
        problems += [f"takes no {', '.join(unknown)}"] if unknown else []
        takes = ", ".join(str(p.replace(annotation=p.empty)) for p in params.values())
        example = ", ".join(f'"{n}": ...' for n in missing) or '"name": value'
        raise UsageError(
            f"{workflow.__name__} {' and '.join(problems) or exc} (it takes: {takes or 'nothing'}): "
            f"pass its arguments as --kwargs '{{{example}}}'"
        ) from None


def _dataclass_of(annotation: Any) -> type | None:
    """The dataclass in ``X`` or ``X | None``, else None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if dataclasses.is_dataclass(candidate) and isinstance(candidate, type):
            return candidate
    return None


def dataclass_arguments(workflow: type, given: dict[str, Any]) -> dict[str, Any]:
    """JSON objects in ``--kwargs`` for parameters typed as a dataclass, built as that dataclass.

    AReaL's workflows take settings objects (TIR's ``tir_config: TIRConfig``); JSON can only
    give a mapping. It is built as a YAML section would be (OmegaConf: ``30`` for a float is
    ``30.0``, an unknown key names the valid ones).
    """
    try:
        hints = typing.get_type_hints(workflow.__init__)
    except Exception:  # unresolvable annotations: fall back to the ones that are classes
        hints = {
            name: p.annotation
            for name, p in inspect.signature(workflow).parameters.items()
            if isinstance(p.annotation, type)
        }
    built: dict[str, Any] = {}
    for name, value in given.items():
        cls = _dataclass_of(hints.get(name))
        if cls is None or not isinstance(value, dict):
            continue
        try:
            built[name] = runtime.structured(cls, value)
        except runtime.ConfigError as exc:
            raise ValueError(f"--kwargs {name} ({cls.__name__}): {exc}") from None
    return built


def default_processor(engine: Any) -> Any:
    """The engine's processor, or the embedded one for the embedded model's tokenizer."""
    processor = getattr(engine, "processor", None)
    if processor is not None:
        return processor

    if getattr(engine, "tokenizer", None) is runtime.tiny_tokenizer():
        return runtime.tiny_vision_processor()
    return None  # the workflow says what it needs


@dataclass
class WorkflowInputs:
    """What a command runs: the workflow (class or instance), its rows, the engine, its kwargs."""

    workflow: Any
    rows: list[dict[str, Any]]
    engine: Any
    kwargs: dict[str, Any] | None  # None for an instance: it is already constructed


@contextlib.contextmanager
def opened_workflow(args: argparse.Namespace) -> Iterator[WorkflowInputs]:
    """Check the shared arguments, load the workflow and rows, build the engine; close it after."""
    check_generation_args(args)
    seed = engine_seed(args)
    given = parse_kwargs(args.kwargs)
    with usage_errors():  # the spec, the dataset and the engine spec are the user's input
        workflow = runtime.load_object(args.workflow)
        rows = load_rows(args.data or default_dataset(workflow), args.limit)
        engine = runtime.engine_from_spec(args.engine, rows=rows, **seed)
    try:
        with usage_errors():  # --kwargs, e.g. a reward_fn that does not import
            kwargs = workflow_kwargs_for(workflow, given, engine, args)
        yield WorkflowInputs(workflow, rows, engine, kwargs if inspect.isclass(workflow) else None)
    finally:
        close = getattr(engine, "close", None)
        if close is not None:
            close()
