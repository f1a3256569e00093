# SPDX-License-Identifier: Apache-2.0
"""AReaL's recovery: ``recover.mode`` / ``recover.freq_*`` checkpoints a killed run resumes from.

Every ``recover.freq_*`` the trainer dumps, into
``{fileroot}/checkpoints/{user}/{experiment}/{trial}/recover_checkpoint``: the actor weights,
the optimizer, scheduler and random states, the data cursor (the rows not yet trained, in the
order they were drawn), and the saver / evaluator / stats-logger / frequency states. With
``recover.mode`` ``on`` or ``auto`` a new run of the same experiment and trial loads it and
continues from the next step; ``off`` / ``disabled`` (the default) never does.

AReaL's interface: ``RecoverHandler(config, ft_spec)``, whose ``dump(engine, step_info, saver,
evaluator, stats_logger, dataloader)`` and ``load(engine, saver, evaluator, stats_logger,
dataloader)`` take anything with ``save(meta)`` / ``load(meta)`` (the engine) and
``state_dict()`` / ``load_state_dict()`` (the rest); ``check_if_recover(config, run_id)`` says
whether a run will resume.

Unlike AReaL's (per-file writes into a fixed folder), the folder is written beside the old one
and swapped in by renames, with ``recover_info.json`` (the marker of a complete dump) written
last and fsynced, so a SIGKILL at any instant leaves either the previous complete checkpoint or
the new one; anything else is never read.
"""

from __future__ import annotations

import getpass
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from areal_runtime.api.experiment_config import check_mode
from areal_runtime.api.io_struct import FinetuneSpec, SaveLoadMeta, StepInfo
from areal_runtime.utils.files import atomic_dir, swapped_out_dirs
from areal_runtime.utils.timeutil import freq_ctl_of

logger = logging.getLogger("areal_runtime.recover")

INFO_FILE = "recover_info.json"
CHECKPOINT_DIR = "recover_checkpoint"
FORMAT = 1
# The engine's files in a dump; more engines (a dict) get a sub-folder each.
DEFAULT_ENGINE = "default"


@dataclass
class RecoverInfo:
    """What a dump holds besides the engines' files (``recover_info.json``)."""

    last_step_info: StepInfo
    saver_info: dict[str, Any]
    evaluator_info: dict[str, Any]
    stats_logger_info: dict[str, Any]
    dataloader_info: dict[str, Any]
    checkpoint_info: dict[str, Any]


def save_root(fileroot: str, experiment_name: str, trial_name: str) -> Path:
    """AReaL's ``Saver.get_save_root``: ``{fileroot}/checkpoints/{user}/{experiment}/{trial}``."""
    if not fileroot:
        raise ValueError(
            "recover.mode is on but there is no fileroot to keep recover checkpoints in: set "
            "cluster.fileroot (or recover.fileroot)"
        )
    return Path(fileroot) / "checkpoints" / getpass.getuser() / experiment_name / trial_name


def checkpoint_folder(config: Any) -> Path:
    """Where ``config`` (a ``RecoverConfig``) keeps its recover checkpoint."""
    return save_root(config.fileroot, config.experiment_name, config.trial_name) / CHECKPOINT_DIR


def _read_info(folder: Path) -> dict[str, Any] | None:
    """The info of a complete dump in ``folder``; None for a missing or torn one."""
    try:
        payload = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if payload.get("complete") and payload.get("format") == FORMAT:
        return payload
    return None


def complete_checkpoint(folder: Path) -> Path | None:
    """The complete checkpoint: ``folder``, or (killed mid-swap) the previous one beside it."""
    candidates = [folder, *swapped_out_dirs(folder)]
    return next((c for c in candidates if _read_info(c) is not None), None)


def _info_of(payload: dict[str, Any]) -> RecoverInfo:
    return RecoverInfo(
        last_step_info=StepInfo(**payload["last_step_info"]),
        saver_info=payload["saver_info"],
        evaluator_info=payload["evaluator_info"],
        stats_logger_info=payload["stats_logger_info"],
        dataloader_info=payload["dataloader_info"],
        checkpoint_info=payload["checkpoint_info"],
    )


def _engines(engine: Any) -> dict[str, Any]:
    return engine if isinstance(engine, dict) else {DEFAULT_ENGINE: engine}


def _engine_path(folder: Path, name: str) -> Path:
    return folder if name == DEFAULT_ENGINE else folder / name


def _refuse_gateway_controller(engine: Any) -> None:
    """AReaL's controller v2 has no recovery; say so before touching anything."""
    # An attribute, not an isinstance: the controller lives in a higher layer (experimental).
    if any(not getattr(e, "supports_recovery", True) for e in _engines(engine).values()):
        raise NotImplementedError(
            "Recovery is not supported with GatewayTrainController "
            '(`_version="v2"`) yet. Disable `recover.mode` or use `_version="v1"`.'
        )


class RecoverHandler:
    """Dumps and loads recover checkpoints on ``recover.freq_*`` (AReaL's ``RecoverHandler``).

    Paths come from ``config`` (``experiment_name``, ``trial_name``, ``fileroot``), as in AReaL.
    """

    def __init__(self, config: Any, ft_spec: FinetuneSpec) -> None:
        self.config = config
        self.ft_spec = ft_spec
        self.enabled = check_mode(config.mode)
        self.folder = checkpoint_folder(config) if self.enabled else None
        self.last_step_info = StepInfo(
            epoch=-1, epoch_step=-1, global_step=-1, steps_per_epoch=ft_spec.steps_per_epoch
        )
        self.freq_ctl = freq_ctl_of(config)
        if self.enabled and not (config.freq_epochs or config.freq_steps or config.freq_secs):
            logger.warning(
                "recover.mode is %r but no recover.freq_epochs / freq_steps / freq_secs is set, "
                "so no recover checkpoint is ever written; set recover.freq_steps=N",
                config.mode,
            )

    # -- dump --------------------------------------------------------------------------------
    def dump(
        self,
        engine: Any,
        step_info: StepInfo,
        saver: Any,
        evaluator: Any,
        stats_logger: Any,
        dataloader: Any,
        tokenizer: Any = None,
        processor: Any = None,
        base_model_path: str | None = None,
    ) -> Path | None:
        """Called after every step: when ``recover.freq_*`` says so, write a checkpoint beside
        the old one and swap it in (see the module doc). Returns its folder, or None."""
        if not self.enabled:
            return None
        _refuse_gateway_controller(engine)
        ended_epoch = step_info.epoch_step == self.ft_spec.steps_per_epoch - 1
        if not self.freq_ctl.check(epochs=int(ended_epoch), steps=1):
            return None
        assert self.folder is not None
        target = self.folder
        with atomic_dir(target, fsync=True) as tmp:
            for name, each in _engines(engine).items():
                path = _engine_path(tmp, name)
                path.mkdir(exist_ok=True)
                each.save(
                    SaveLoadMeta(
                        path=str(path),
                        weight_format="hf",
                        with_optim=not self.config.no_save_optim,
                        tokenizer=tokenizer,
                        processor=processor,
                        base_model_path=base_model_path,
                    )
                )
            info = RecoverInfo(
                last_step_info=step_info,
                saver_info=saver.state_dict(),
                evaluator_info=evaluator.state_dict(),
                stats_logger_info=stats_logger.state_dict(),
                dataloader_info=dataloader.state_dict(),
                checkpoint_info=self.freq_ctl.state_dict(),
            )
            payload = {"format": FORMAT, "complete": True, **asdict(info)}
            (tmp / INFO_FILE).write_text(json.dumps(payload, indent=2), encoding="utf-8")
        self.last_step_info = step_info
        return target

    # -- load --------------------------------------------------------------------------------
    def load(
        self,
        engine: Any,
        saver: Any,
        evaluator: Any,
        stats_logger: Any,
        dataloader: Any,
        inference_engine: Any = None,
        weight_update_meta: Any = None,
        inference_engine_update_from: str = DEFAULT_ENGINE,
    ) -> RecoverInfo | None:
        """Restore everything from the last complete checkpoint; None when there is none (the
        run starts from scratch). The run continues at ``info.last_step_info.next()``."""
        if not self.enabled:
            return None
        _refuse_gateway_controller(engine)
        if inference_engine is not None:
            raise NotImplementedError(
                "RecoverHandler.load does not push weights to an inference engine here: after "
                "load, send the engine's weights with its update_weights and set_version "
                "(the runtime's trainer does)"
            )
        assert self.folder is not None
        folder = complete_checkpoint(self.folder)
        if folder is None:
            logger.info("no recover checkpoint in %s: starting from scratch", self.folder)
            return None
        info = _info_of(_read_info(folder) or {})
        if info.last_step_info.steps_per_epoch != self.ft_spec.steps_per_epoch:
            raise ValueError(
                f"the recover checkpoint in {folder} is from a run with "
                f"{info.last_step_info.steps_per_epoch} steps per epoch, this one has "
                f"{self.ft_spec.steps_per_epoch}: the dataset or batch size changed. Use a new "
                "trial_name, or recover.mode=disabled to start over"
            )
        saver.load_state_dict(info.saver_info)
        self.freq_ctl.load_state_dict(info.checkpoint_info)
        evaluator.load_state_dict(info.evaluator_info)
        stats_logger.load_state_dict(info.stats_logger_info)
        dataloader.load_state_dict(info.dataloader_info)
        for name, each in _engines(engine).items():
            each.load(
                SaveLoadMeta(
                    path=str(_engine_path(folder, name)),
                    weight_format="hf",
                    with_optim=not self.config.no_load_optim,
                )
            )
        self.last_step_info = info.last_step_info
        logger.info("recovered from %s; continuing at %s", folder, info.last_step_info.next())
        return info


def check_if_auto_recover(config: Any) -> bool:
    """Whether ``config``'s experiment and trial have a complete recover checkpoint to resume."""
    if not config.fileroot:
        return False
    folder = complete_checkpoint(checkpoint_folder(config))
    if folder is None:
        return False
    payload = _read_info(folder)
    return payload is not None and payload["last_step_info"]["epoch"] >= 0


def check_if_recover(config: Any, _run_id: int) -> bool:
    """Whether this run resumes: ``recover.mode`` on/auto and a checkpoint to resume from.

    ``_run_id`` is unused, kept for AReaL's signature.
    """
    if not check_mode(config.mode):
        return False
    return check_if_auto_recover(config)
