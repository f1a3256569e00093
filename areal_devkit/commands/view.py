# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit view``: turn a trajectory file into the self-contained viewer page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.errors import UsageError

EXAMPLES = """examples:
  areal-devkit run examples.arithmetic_rlvr:ArithmeticRLVRWorkflow --output t.jsonl
  areal-devkit view t.jsonl                      # writes t.html
  areal-devkit view t.pt -o page.html --tokenizer hf:./my-model
  areal-devkit view /tmp/areal/experiments/logs/$USER/EXP/TRIAL   # a training run's curves
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "view",
        help="write the trajectory viewer page for a .jsonl/.pt trajectory file",
        description="Write one HTML page (no network needed) that shows every episode's tokens "
        "coloured by the loss mask, with rewards, histograms and filters.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "trajectories",
        help="a .jsonl or .pt file from run --output or train, or a training run's log folder "
        "(or its stats.jsonl)",
    )
    p.add_argument("-o", "--output", help="the page to write (default: the input with .html)")
    p.add_argument(
        "--tokenizer",
        default="default",
        help="decode tokens with: default (the embedded model's), hf:PATH, or none (show ids)",
    )
    p.set_defaults(handler=view)


def load_tokenizer(spec: str) -> Any:
    if spec == "none":
        return None
    if spec == "default":
        return runtime.tiny_tokenizer()
    if spec.startswith("hf:"):
        try:
            return runtime.load_hf_tokenizer(spec[3:])
        except OSError as exc:
            raise UsageError(f"--tokenizer {spec}: cannot load a tokenizer there ({exc})") from None
    raise UsageError(f"--tokenizer must be default, none or hf:PATH, got {spec!r}")


def missing_in_folder(folder: Path) -> str:
    """What a folder lacks for ``view``, and the command that writes it."""
    stats = runtime.STATS_FILE
    logs = sorted(folder.glob(f"logs/*/*/*/{stats}"))
    if logs:  # a fileroot: name the trial folders inside it
        found = ", ".join(str(p.parent) for p in logs[:3])
        return f"{folder} is a fileroot, not a trial's log folder: view one of {found}"
    return (
        f"{folder} has no {stats} (yet): a training run writes it there after its first "
        f"step (areal-devkit train --fileroot DIR writes DIR/logs/USER/EXPERIMENT/TRIAL/"
        f"{stats}); for episodes, view a trajectory file instead (areal-devkit run "
        f"--output t.jsonl, or train --output t.jsonl)"
    )


def view(args: argparse.Namespace) -> int:
    from areal_devkit.viewer import episodes_from_file, write_page
    from areal_devkit.viewer.training_page import is_stats_source, write_training_page

    source = Path(args.trajectories)
    if is_stats_source(source):
        folder = source if source.is_dir() else source.parent
        target = Path(args.output) if args.output else folder / "training.html"
        if not target.resolve().parent.is_dir():
            raise UsageError(f"the folder of {target} does not exist; create it first")
        steps = write_training_page(source, target)
        print(f"wrote {target} ({steps} steps); open it in a browser")
        return 0
    if source.is_dir():
        raise UsageError(missing_in_folder(source))
    target = Path(args.output) if args.output else source.with_suffix(".html")
    if target.resolve() == source.resolve():
        raise UsageError(f"-o {target} would overwrite the trajectory file; name another page")
    if not target.resolve().parent.is_dir():
        raise UsageError(f"the folder of {target} does not exist; create it first")
    tokenizer = load_tokenizer(args.tokenizer)
    episodes = episodes_from_file(source)
    write_page(episodes, target, tokenizer, title=f"areal-devkit: {source.name}")
    print(f"wrote {target} ({len(episodes)} episodes); open it in a browser")
    return 0
