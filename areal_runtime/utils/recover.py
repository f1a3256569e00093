# SPDX-License-Identifier: Apache-2.0
"""AReaL's recovery: ``recover.mode`` / ``recover.freq_*`` checkpoints a killed run resumes from.

Every ``recover.freq_*`` the trainer dumps, into
``{fileroot}/checkpoints/{user}/{experiment}/{trial}/recover_checkpoint``: the actor weights,
the optimizer, scheduler and random states, the data cursor (the rows not yet trained, in the
order they were drawn), and the saver / evaluator / stats-logger / frequency states. With
``recover.mode`` ``on`` or ``auto`` a new run of the same experiment and trial loads it and
continues from the next step; ``off`` / ``disabled`` (the default) never does.

The folder is written beside the old one and swapped in by renames, with ``recover_info.json``
(the marker of a complete dump) written last and fsynced, so a SIGKILL at any instant leaves
either the previous complete checkpoint or the new one; anything else is never read.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from areal_runtime.utils.timeutil import freq_ctl_of

logger = logging.getLogger("areal_runtime.recover")

ON_MODES = ("on", "auto")
OFF_MODES = ("off", "disabled")
INFO_FILE = "recover_info.json"
FORMAT = 1


@dataclass
class StepInfo:
    """Where a run stands (AReaL's ``StepInfo``; all 0-based)."""

    epoch: int
    epoch_step: int
    global_step: int
    steps_per_epoch: int

    def next(self) -> StepInfo:
        last = self.epoch_step == self.steps_per_epoch - 1
        return StepInfo(
            epoch=self.epoch + int(last),
            epoch_step=0 if last else self.epoch_step + 1,
            global_step=self.global_step + 1,
            steps_per_epoch=self.steps_per_epoch,
        )


@dataclass
class RecoverInfo:
    """What a dump holds besides the weights and optimizer (``recover_info.json``)."""

    last_step_info: StepInfo
    saver_info: dict[str, Any]
    evaluator_info: dict[str, Any]
    stats_logger_info: dict[str, Any]
    dataloader_info: dict[str, Any]
    checkpoint_info: dict[str, Any]


def check_mode(mode: str) -> bool:
    """Whether ``recover.mode`` turns recovery on; a clear error for any other value."""
    if mode in ON_MODES:
        return True
    if mode in OFF_MODES:
        return False
    raise ValueError(
        f"recover.mode {mode!r} is not a recovery mode: use 'on' or 'auto' (resume from the last "
        "recover checkpoint of this experiment and trial when there is one) or 'off' / "
        "'disabled' (always start from scratch), as in AReaL ('fault' and 'resume' were removed "
        "there)"
    )


def save_root(fileroot: str, experiment_name: str, trial_name: str) -> Path:
    """AReaL's ``Saver.get_save_root``: ``{fileroot}/checkpoints/{user}/{experiment}/{trial}``."""
    if not fileroot:
        raise ValueError(
            "recover.mode is on but there is no fileroot to keep recover checkpoints in: set "
            "cluster.fileroot (or recover.fileroot)"
        )
    return Path(fileroot) / "checkpoints" / getpass.getuser() / experiment_name / trial_name


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RecoverHandler:
    """Dumps and loads recover checkpoints on ``recover.freq_*`` (AReaL's ``RecoverHandler``)."""

    def __init__(
        self, config: Any, ft_spec: Any, *, experiment_name: str, trial_name: str, fileroot: str
    ) -> None:
        self.config = config
        self.ft_spec = ft_spec
        self.enabled = check_mode(config.mode)
        self.folder = (
            save_root(fileroot, experiment_name, trial_name) / "recover_checkpoint"
            if self.enabled
            else None
        )
        self.freq_ctl = freq_ctl_of(config)
        if self.enabled and not (config.freq_epochs or config.freq_steps or config.freq_secs):
            logger.warning(
                "recover.mode is %r but no recover.freq_epochs / freq_steps / freq_secs is set, "
                "so no recover checkpoint is ever written; set recover.freq_steps=N",
                config.mode,
            )

    # -- dump --------------------------------------------------------------------------------
    def due(self, step_info: StepInfo) -> bool:
        """Advance the frequency control by one step; whether this step dumps."""
        if not self.enabled:
            return False
        ended_epoch = step_info.epoch_step == self.ft_spec.steps_per_epoch - 1
        return self.freq_ctl.check(epochs=int(ended_epoch), steps=1)

    def dump(
        self,
        *,
        model: Any,
        tokenizer: Any,
        training_state: dict[str, Any],
        info: RecoverInfo,
    ) -> Path:
        """Write the checkpoint beside the old one, then swap it in (see the module doc)."""
        import torch

        assert self.folder is not None
        target = self.folder
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        for stale in target.parent.glob(f".{target.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp.mkdir()
        from areal_runtime.trainer.checkpoint import quiet_hf_progress

        with quiet_hf_progress():
            model.save_pretrained(str(tmp / "model"))
        if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
            tokenizer.save_pretrained(str(tmp / "model"))
        if not self.config.no_save_optim:
            torch.save(training_state, tmp / "training_state.pt")
        info.checkpoint_info = self.freq_ctl.state_dict()
        payload = {"format": FORMAT, "complete": True, **asdict(info)}
        (tmp / INFO_FILE).write_text(json.dumps(payload, indent=2), encoding="utf-8")
        _fsync_tree(tmp)
        if target.exists():
            target.rename(old)
        tmp.rename(target)
        shutil.rmtree(old, ignore_errors=True)
        for leftover in target.parent.glob(f".{target.name}.old-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        return target

    # -- load --------------------------------------------------------------------------------
    def _complete_folder(self) -> Path | None:
        """The complete checkpoint: the folder, or (killed mid-swap) the previous one."""
        assert self.folder is not None
        candidates = [self.folder, *sorted(self.folder.parent.glob(f".{self.folder.name}.old-*"))]
        for folder in candidates:
            info = folder / INFO_FILE
            if not info.is_file():
                continue
            try:
                payload = json.loads(info.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            if payload.get("complete") and payload.get("format") == FORMAT:
                return folder
        return None

    def load(self) -> tuple[RecoverInfo, Path] | None:
        """The last complete checkpoint's info and folder, or None (then start from scratch)."""
        if not self.enabled:
            return None
        folder = self._complete_folder()
        if folder is None:
            logger.info("no recover checkpoint in %s: starting from scratch", self.folder)
            return None
        payload = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        info = RecoverInfo(
            last_step_info=StepInfo(**payload["last_step_info"]),
            saver_info=payload["saver_info"],
            evaluator_info=payload["evaluator_info"],
            stats_logger_info=payload["stats_logger_info"],
            dataloader_info=payload["dataloader_info"],
            checkpoint_info=payload["checkpoint_info"],
        )
        if info.last_step_info.steps_per_epoch != self.ft_spec.steps_per_epoch:
            raise ValueError(
                f"the recover checkpoint in {folder} is from a run with "
                f"{info.last_step_info.steps_per_epoch} steps per epoch, this one has "
                f"{self.ft_spec.steps_per_epoch}: the dataset or batch size changed. Use a new "
                "trial_name, or recover.mode=disabled to start over"
            )
        self.freq_ctl.load_state_dict(info.checkpoint_info)
        return info, folder

    def load_training_state(self, folder: Path) -> dict[str, Any] | None:
        import torch

        path = folder / "training_state.pt"
        if self.config.no_load_optim or not path.is_file():
            return None
        return torch.load(path, weights_only=False)
