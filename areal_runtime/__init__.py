# SPDX-License-Identifier: Apache-2.0
"""areal_runtime: a CPU-friendly implementation of the API surface an AReaL workflow touches.

Module paths mirror AReaL's (``areal.api.io_struct`` -> ``areal_runtime.api.io_struct``), so a
workflow ports between the two by changing its top-level package name only.
"""

from areal_runtime.utils.lazy_exports import lazy_exports

__version__ = "0.3.0"

__all__ = ["PPOTrainer"]


__getattr__, __dir__ = lazy_exports(__name__, {"PPOTrainer": ".trainer.rl_trainer"})
