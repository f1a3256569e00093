# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``StatsLogger``: every step's statistics to the console and under the fileroot.

``commit(epoch, step, global_step, stats)`` prints a compact row (the full set goes to the
files) and appends the statistics to ``{fileroot}/logs/{user}/{experiment}/{trial}/stats.jsonl``
(always; ``areal-devkit train --plot`` and ``areal-devkit view`` read it), TensorBoard event
files when TensorBoard is installed, and wandb / swanlab / trackio runs when
``stats_logger.{wandb,swanlab,trackio}.mode`` is not ``disabled``. After a recovery the JSONL is
cut back to the recovered step, so a resumed run's file reads as one run.

The trackers are module-level names as in AReaL (``wandb``, ``swanlab``, ``trackio``, ``dist``),
imported on first use: an uninstalled tracker costs nothing until its mode asks for it.
"""

from __future__ import annotations

import getpass
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from areal_runtime.utils.files import read_jsonl, write_jsonl
from areal_runtime.utils.lazy_module import LazyModule

logger = logging.getLogger("areal_runtime.stats_logger")

STATS_FILE = "stats.jsonl"

# The compact console row: (header, key, format). Everything else is in the files.
CONSOLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("reward", "ppo_actor/task_reward/avg", "{:8.3f}"),
    ("adv|max|", "ppo_actor/advantages/max", "{:8.3f}"),
    ("imp_w", "ppo_actor/update/importance_weight/avg", "{:7.3f}"),
    ("imp_max", "ppo_actor/update/importance_weight/max", "{:7.2f}"),
    ("clip", "ppo_actor/update/clip_ratio/avg", "{:6.3f}"),
    ("entropy", "ppo_actor/update/entropy/avg", "{:7.3f}"),
    ("kl", "ppo_actor/update/approx_kl/avg", "{:8.4f}"),
    ("stale", "ppo_actor/update/version_stats/sample_staleness_theta_avg", "{:5.2f}"),
    ("len", "ppo_actor/seq_len/avg", "{:6.1f}"),
    ("s/step", "timeperf/step", "{:6.2f}"),
)
HEADER_EVERY = 20

# AReaL's module-level trackers; imported when a section's mode is not 'disabled'.
wandb: Any = LazyModule("wandb")
swanlab: Any = LazyModule("swanlab")
trackio: Any = LazyModule("trackio")
dist: Any = LazyModule("torch.distributed")
TRACKERS = ("wandb", "swanlab", "trackio")


def _is_worker_rank() -> bool:
    """A rank other than 0 of an initialised process group (AReaL logs on rank 0 only).

    torch is not imported for the question: without it there is no process group.
    """
    if isinstance(dist, LazyModule) and not dist.loaded:
        return False
    return bool(dist.is_available() and dist.is_initialized() and dist.get_rank() != 0)


def _get(config: Any, name: str, default: Any = None) -> Any:
    """A field of an AReaL sub-config given as a dataclass or a plain mapping."""
    if config is None:
        return default
    if isinstance(config, dict):
        return config.get(name, default)
    return getattr(config, name, default)


def log_dir(fileroot: str, experiment_name: str, trial_name: str) -> Path:
    """AReaL's ``StatsLogger.get_log_path``: ``{fileroot}/logs/{user}/{experiment}/{trial}``."""
    if not fileroot or not experiment_name or not trial_name:
        raise ValueError(
            "stats_logger needs fileroot, experiment_name and trial_name: set "
            "cluster.fileroot (or stats_logger.fileroot), experiment_name and trial_name"
        )
    return Path(fileroot) / "logs" / getpass.getuser() / experiment_name / trial_name


def read_stats(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``stats.jsonl`` (or the one in a log folder); a torn last line is skipped."""
    path = Path(path)
    if path.is_dir():
        path = path / STATS_FILE
    return read_jsonl(path, skip_invalid=True)  # a line cut short by a kill is skipped


class ScalarEventWriter:
    """TensorBoard event files, one event per step holding every scalar.

    ``SummaryWriter.add_scalar`` builds an event per value (about 15 ms for AReaL's 150 keys);
    one event with all values costs well under a millisecond and reads back the same.
    """

    def __init__(self, folder: str) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._event, self._summary = Event, Summary
        self._writer = EventFileWriter(folder)  # writes on its own thread

    def add_scalars(self, scalars: dict[str, float], step: int) -> None:
        values = [self._summary.Value(tag=k, simple_value=v) for k, v in scalars.items()]
        event = self._event(wall_time=time.time(), step=step, summary=self._summary(value=values))
        self._writer.add_event(event)

    def close(self) -> None:
        self._writer.close()


class StatsLogger:
    """Writes each committed step (AReaL's interface: ``commit``, ``state_dict``, ``close``)."""

    def __init__(
        self,
        config: Any,
        ft_spec: Any = None,
        *,
        console: TextIO | bool | None = True,
        experiment_config: dict[str, Any] | None = None,
        total_steps: int | None = None,
    ) -> None:
        """``config`` is the experiment config (AReaL's) or its ``stats_logger`` section;
        ``config=None`` prints only (no fileroot). ``total_steps``: the run's length when a
        ``total_train_steps`` cap makes it shorter than ``ft_spec``'s."""
        self.config = getattr(config, "stats_logger", config)
        self.ft_spec = ft_spec
        self.total_steps = (
            total_steps if total_steps is not None else getattr(ft_spec, "total_train_steps", None)
        )
        self.console: TextIO | None = (
            sys.stdout if console is True else (None if console is False else console)
        )
        self._last_commit_step = -1
        self._rows_printed = 0
        self.start_time = time.perf_counter()
        # Opened at the first write: "w" for a new run, "a" after load_state_dict (a recovery).
        self._file: TextIO | None = None
        self._closed = False
        self.path: Path | None = None
        self.stats_path: Path | None = None
        self._tensorboard = None
        self._trackers: dict[str, Any] = {}
        if self.config is None or _is_worker_rank():
            self.config = None
            return
        self.path = log_dir(
            self.config.fileroot, self.config.experiment_name, self.config.trial_name
        )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(
                f"cannot create the statistics folder {self.path} ({exc.strerror}); set "
                "cluster.fileroot (or stats_logger.fileroot) to a writable folder"
            ) from None
        self.stats_path = self.path / STATS_FILE
        logger.info("statistics: %s", self.stats_path)
        self._tensorboard = self._open_tensorboard()
        for name in TRACKERS:
            tracker = self._open_tracker(name, experiment_config)
            if tracker is not None:
                self._trackers[name] = tracker

    @classmethod
    def console_only(cls, ft_spec: Any = None) -> StatsLogger:
        """Prints each step's row and writes nothing (no fileroot configured)."""
        return cls(None, ft_spec)

    # -- sinks ----------------------------------------------------------------------------------
    def _open_tensorboard(self) -> Any:
        tb = _get(self.config, "tensorboard")
        folder = _get(tb, "path") or str(self.path / "tensorboard")
        try:
            return ScalarEventWriter(folder)
        except ImportError:
            if _get(tb, "path"):
                raise ValueError(
                    f"stats_logger.tensorboard.path is set ({folder}) but TensorBoard is not "
                    "installed: pip install tensorboard, or remove the path"
                ) from None
            return None

    @property
    def _trackio_enabled(self) -> bool:
        """AReaL's flag: whether metrics also go to trackio."""
        return "trackio" in self._trackers

    def _open_tracker(self, name: str, experiment_config: dict[str, Any] | None) -> Any:
        section = _get(self.config, name)
        mode = _get(section, "mode", "disabled")
        if mode in (None, "disabled"):
            return None
        module = globals()[name]
        try:
            init = module.init
        except ImportError:
            raise ValueError(
                f"stats_logger.{name}.mode is {mode!r} but {name} is not installed: "
                f"pip install {name}, or set stats_logger.{name}.mode=disabled"
            ) from None
        project = _get(section, "project") or self.config.experiment_name
        run_name = _get(section, "name") or self.config.trial_name
        if name == "trackio":
            init(
                project=project,
                name=run_name,
                config=experiment_config or {},
                space_id=_get(section, "space_id"),
            )
        elif name == "wandb":
            init(
                mode=mode,
                entity=_get(section, "entity"),
                project=project,
                name=run_name,
                group=_get(section, "group")
                or f"{self.config.experiment_name}_{self.config.trial_name}",
                tags=_get(section, "tags"),
                notes=_get(section, "notes"),
                config=experiment_config or {},
                dir=str(self.path),
                id=f"{self.config.experiment_name}_{self.config.trial_name}",
                resume="allow",
            )
        else:
            init(
                project=project,
                experiment_name=run_name + "_train",
                config=experiment_config or {},
                logdir=str(self.path),
                mode=mode,
            )
        return module

    # -- AReaL's interface ---------------------------------------------------------------------
    def commit(
        self, epoch: int, step: int, global_step: int, data: dict[str, Any] | list[dict[str, Any]]
    ) -> None:
        """Log ``data`` as step ``global_step + 1`` (AReaL's numbering is 0-based, ours too)."""
        items = [data] if isinstance(data, dict) else list(data)
        log_step = max(global_step, self._last_commit_step + 1)
        for i, item in enumerate(items):
            scalars = {
                k: float(v)
                for k, v in item.items()
                if isinstance(v, int | float)
                and not isinstance(v, bool)
                and not k.endswith("__count")
            }
            row = {
                "epoch": epoch + 1,
                "epoch_step": step + 1,
                "global_step": log_step + i + 1,
                **{k: v for k, v in item.items() if not k.endswith("__count")},
            }
            self._write(row)
            if self._tensorboard is not None:
                self._tensorboard.add_scalars(scalars, log_step + i)
            for tracker in self._trackers.values():
                tracker.log(scalars, step=log_step + i)
            self._print_row(row)
        self._last_commit_step = log_step + len(items) - 1

    def log_eval(self, global_step: int, stats: dict[str, float]) -> None:
        """Print an evaluation's result; its values go into the step's committed row."""
        if self.console is not None:
            shown = "  ".join(f"{k.split('/', 1)[-1]} {v:.4g}" for k, v in stats.items())
            print(f"eval after step {global_step + 1}: {shown}", file=self.console, flush=True)

    def _write(self, row: dict[str, Any]) -> None:
        if self.stats_path is None:
            return
        if self._file is None:
            self._file = open(self.stats_path, "w", encoding="utf-8")  # noqa: SIM115 (kept open)
        self._file.write(json.dumps(row, default=str) + "\n")
        self._file.flush()

    def _print_row(self, row: dict[str, Any]) -> None:
        if self.console is None:
            return
        spec = self.ft_spec
        total = self.total_steps
        epochs = getattr(spec, "total_train_epochs", None)
        if self._rows_printed % HEADER_EVERY == 0:
            head = f"{'step':>9} {'epoch':>5} " + " ".join(
                f"{h:>{len(fmt.format(0.0))}}" for h, _, fmt in CONSOLE_COLUMNS
            )
            print(head, file=self.console, flush=True)
        step = f"{row['global_step']}/{total}" if total else str(row["global_step"])
        epoch = f"{row['epoch']}/{epochs}" if epochs else str(row["epoch"])
        cells = []
        for _, key, fmt in CONSOLE_COLUMNS:
            value = row.get(key)
            width = len(fmt.format(0.0))
            cells.append(fmt.format(value) if isinstance(value, int | float) else "-" * width)
        print(f"{step:>9} {epoch:>5} " + " ".join(cells), file=self.console, flush=True)
        self._rows_printed += 1

    def state_dict(self) -> dict[str, Any]:
        return {"last_commit_step": self._last_commit_step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume after a recovery: drop rows logged after the recovered step."""
        self._last_commit_step = int(state["last_commit_step"])
        if self.stats_path is None:
            return
        if self._file is not None:
            self._file.close()
        old = read_stats(self.stats_path) if self.stats_path.exists() else []
        kept = [r for r in old if r["global_step"] <= self._last_commit_step + 1]
        write_jsonl(self.stats_path, kept)
        self._file = open(self.stats_path, "a", encoding="utf-8")  # noqa: SIM115

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._file is not None:
            self._file.close()
        if self._tensorboard is not None:
            self._tensorboard.close()
        for tracker in self._trackers.values():
            tracker.finish()
        if self.stats_path is not None:
            logger.info("statistics written to %s", self.stats_path)

    @staticmethod
    def get_log_path(config: Any) -> str:
        return str(log_dir(config.fileroot, config.experiment_name, config.trial_name))
