# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``EpochStepTimeFreqCtl``: "every N epochs, or N steps, or N seconds".

The saver, the evaluator and the recover handler each own one; its state goes into the recover
checkpoint so a resumed run fires on the same steps as an uninterrupted one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FrequencyControl:
    """Fires once ``frequency_steps`` steps (and/or ``frequency_seconds``) have passed.

    With both set, both must be met (as in AReaL); with neither, it never fires, except once
    at the first check when ``initial_value`` is true.
    """

    frequency_steps: int | None = None
    frequency_seconds: float | None = None
    initial_value: bool = False
    steps: int = 0
    last_steps: int = 0
    last_time: float = field(default_factory=time.time)

    def check(self, steps: int = 1) -> bool:
        now = time.time()
        self.steps += steps
        if self.initial_value:
            self.initial_value = False
            self.last_steps, self.last_time = self.steps, now
            return True
        if self.frequency_steps is None and self.frequency_seconds is None:
            return False
        if self.frequency_steps is not None and (
            self.steps - self.last_steps < self.frequency_steps
        ):
            return False
        if self.frequency_seconds is not None and now - self.last_time < self.frequency_seconds:
            return False
        self.last_steps, self.last_time = self.steps, now
        return True

    def state_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "last_steps": self.last_steps,
            "initial_value": self.initial_value,
            "seconds_since_last": time.time() - self.last_time,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.last_steps = int(state["last_steps"])
        self.initial_value = bool(state["initial_value"])
        # Time spent while the run was down does not count toward the next trigger.
        self.last_time = time.time() - float(state["seconds_since_last"])


class EpochStepTimeFreqCtl:
    """True when any of the epoch, step or time frequencies is due (AReaL's semantics).

    ``check(epochs=1 if this step ended an epoch else 0, steps=1)`` once per training step.
    """

    def __init__(
        self,
        freq_epoch: int | None = None,
        freq_step: int | None = None,
        freq_sec: float | None = None,
        initial_epoch_value: bool = False,
    ) -> None:
        for name, value in (("freq_epochs", freq_epoch), ("freq_steps", freq_step)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 or null, got {value}")
        if freq_sec is not None and freq_sec <= 0:
            raise ValueError(f"freq_secs must be > 0 or null, got {freq_sec}")
        self.epoch_ctl = FrequencyControl(
            frequency_steps=freq_epoch, initial_value=initial_epoch_value
        )
        self.step_ctl = FrequencyControl(frequency_steps=freq_step)
        self.time_ctl = FrequencyControl(frequency_seconds=freq_sec)

    def check(self, epochs: int, steps: int) -> bool:
        results = (
            self.epoch_ctl.check(epochs),
            self.step_ctl.check(steps),
            self.time_ctl.check(),
        )
        return any(results)

    def state_dict(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch_ctl.state_dict(),
            "step": self.step_ctl.state_dict(),
            "time": self.time_ctl.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch_ctl.load_state_dict(state["epoch"])
        self.step_ctl.load_state_dict(state["step"])
        self.time_ctl.load_state_dict(state["time"])


def freq_ctl_of(config: Any, initial_epoch_value: bool = False) -> EpochStepTimeFreqCtl:
    """The controller for a saver / evaluator / recover config (``freq_epochs`` ...)."""
    return EpochStepTimeFreqCtl(
        freq_epoch=config.freq_epochs,
        freq_step=config.freq_steps,
        freq_sec=config.freq_secs,
        initial_epoch_value=initial_epoch_value,
    )
