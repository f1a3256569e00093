# SPDX-License-Identifier: Apache-2.0
"""``GatewayTrainController`` at AReaL's path: a name to recognise, not a cluster controller.

AReaL's controller v2 drives train engines on a cluster through an HTTP gateway. The runtime
trains in one process and has no such service, so this class cannot be constructed. It exists
because AReaL code checks for it (``isinstance(engine, GatewayTrainController)``: recovery
refuses controller-v2 runs), and those checks must import and answer here too.
"""

from __future__ import annotations

from typing import Any


class GatewayTrainController:
    """AReaL's controller-v2 type; constructing it raises (the runtime has no training service)."""

    supports_recovery = False  # what RecoverHandler checks (AReaL's refusal, without an import)

    def __init__(self, train_engine: Any, config: Any, scheduler: Any) -> None:
        raise NotImplementedError(
            "GatewayTrainController (AReaL's controller v2) drives train engines on a cluster "
            "through a gateway; areal_runtime trains in one process and has no training service. "
            "Use the runtime's trainer (areal_runtime.trainer.PPOTrainer)."
        )


__all__ = ["GatewayTrainController"]
