# SPDX-License-Identifier: Apache-2.0
"""Checkpoints that survive Ctrl-C: write to a temporary folder, then swap it in by renames.

At every moment ``path`` is either the previous complete checkpoint or the new complete one;
an interrupted save leaves only a hidden ``.NAME.tmp-PID`` folder behind, which the next save
removes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from areal_runtime.utils.files import atomic_dir


def check_writable(path: str | Path) -> Path:
    """Refuse a checkpoint path that cannot be written, before any training happens."""
    target = Path(path)
    parent = target.resolve().parent
    if target.exists() and not target.is_dir():
        raise ValueError(f"--save {target}: it is a file; give a folder path for the checkpoint")
    if not parent.is_dir():
        raise ValueError(f"--save {target}: the folder {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK | os.X_OK)
    ):
        raise ValueError(
            f"--save {target}: no permission to write in {parent}; choose a writable folder"
        )
    return target


@contextlib.contextmanager
def quiet_hf_progress() -> Iterator[None]:
    """No "Writing model shards" bar every few steps."""
    from transformers.utils import logging as hf_logging

    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()


def save_checkpoint(model: Any, tokenizer: Any, path: str | Path, **extra: Any) -> Path:
    """``model.save_pretrained`` + tokenizer into ``path``, atomically replacing what was there.

    ``extra`` is written as ``trainer_state.json`` (step, version, metrics).
    """
    import json

    target = Path(path)
    with atomic_dir(target, make=False) as tmp:
        with quiet_hf_progress():
            model.save_pretrained(str(tmp))
        if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
            tokenizer.save_pretrained(str(tmp))
        if extra:
            (tmp / "trainer_state.json").write_text(json.dumps(extra, indent=2, default=str))
    return target
