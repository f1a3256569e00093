# SPDX-License-Identifier: Apache-2.0
"""areal_runtime: a CPU-friendly implementation of the API surface an AReaL workflow touches.

Module paths mirror AReaL's (``areal.api.io_struct`` -> ``areal_runtime.api.io_struct``), so a
workflow ports between the two by changing its top-level package name only.
"""

__version__ = "0.3.0"

__all__ = ["PPOTrainer"]


def __getattr__(name: str):
    if name == "PPOTrainer":
        from areal_runtime.trainer.rl_trainer import PPOTrainer

        return PPOTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
