# SPDX-License-Identifier: Apache-2.0
"""Run the pinned AReaL release's examples the way a user moving to a laptop would.

Each example folder is copied from the release (``areal_release.release_tree``) into a
scratch project, its ``areal`` imports and import strings renamed mechanically, and its own
scripts run with command-line overrides only (the embedded model, a few steps, tiny
batches). The subprocess sees this checkout's packages through a folder of links, not the
repository root (whose own ``examples/`` package would shadow the release's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .areal_release import ROOT, release_tree, renamed

PACKAGES = ("areal_runtime", "areal_devkit", "areal_lint")

# Laptop-size: what every training example is given on the command line (AReaL's keys;
# ``++`` sets a key whether or not the example's YAML has it, in Hydra's grammar).
LAPTOP = (
    "++actor.path=default",
    "++stats_logger.wandb.mode=disabled",
    "++gconfig.n_samples=2",
    "++gconfig.max_new_tokens=8",
    "++train_dataset.batch_size=4",
    "++total_train_steps=2",
    "++total_train_epochs=1",
)


class Project:
    """A scratch AReaL-shaped project holding renamed copies of release examples."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.site = root / ".site"
        self.site.mkdir(parents=True, exist_ok=True)
        for name in PACKAGES:
            link = self.site / name
            if not link.exists():
                link.symlink_to(ROOT / name)

    def add_example(self, name: str) -> Path:
        """``examples/<name>`` from the release, ``areal`` renamed to ``areal_runtime``."""
        source = release_tree() / "examples" / name
        target = self.root / "examples" / name
        shutil.copytree(source, target, dirs_exist_ok=True)
        for path in target.rglob("*"):
            if path.suffix in (".py", ".yaml") and path.is_file():
                path.write_text(renamed(path.read_text()))
        return target

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), str(self.site)])
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env["OMP_NUM_THREADS"] = "1"
        return env

    def python(self, *args: str, cwd: Path | None = None, timeout: float = 300):
        """``python args...`` in the project (``cwd`` default: its root)."""
        return subprocess.run(
            [sys.executable, *args],
            cwd=cwd or self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def gsm8k_copy(self) -> Path:
        """A local "gsm8k" folder (train/test JSONL with question/answer, GSM8K's columns)
        holding this repository's small arithmetic word problems."""
        folder = self.root / "data" / "gsm8k"
        folder.mkdir(parents=True, exist_ok=True)
        source = ROOT / "examples" / "gsm8k" / "data"
        for split in ("train", "test"):
            shutil.copy(source / f"{split}.jsonl", folder / f"{split}.jsonl")
        return folder

    def torl_copy(self) -> Path:
        """A local "torl_data" folder in ToRL's parquet format (``prompt`` messages and
        ``reward_model.ground_truth``) holding the same word problems."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = self.root / "data" / "torl_data"
        folder.mkdir(parents=True, exist_ok=True)
        for split in ("train", "test"):
            rows = []
            source = ROOT / "examples" / "gsm8k" / "data" / f"{split}.jsonl"
            for i, line in enumerate(source.read_text().splitlines()):
                row = json.loads(line)
                rows.append({
                    "data_source": "torl",
                    "prompt": [{"role": "user", "content": row["question"]}],
                    "ability": "math",
                    "reward_model": {"ground_truth": row["answer"].split("####")[-1].strip()},
                    "extra_info": {"index": i},
                })  # fmt: skip
            pq.write_table(pa.Table.from_pylist(rows), folder / f"{split}.parquet")
        return folder


def stats_rows(fileroot: Path) -> list[dict]:
    """The per-step statistics the runtime's stats logger wrote under ``fileroot``."""
    files = sorted(fileroot.glob("logs/**/stats.jsonl"))
    assert files, f"no stats.jsonl under {fileroot}"
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
