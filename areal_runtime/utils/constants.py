# SPDX-License-Identifier: Apache-2.0
"""Named choices shared by the config and the trainer (AReaL's ``areal.utils.constants``).

No torch here: the config module imports these to validate ``prox_logp_method``.
"""

from __future__ import annotations

from enum import StrEnum


class ProxLogpMethod(StrEnum):
    """Where decoupled PPO gets the proximal policy's logprobs from.

    ``recompute`` runs a no-grad forward with the weights before the update; ``loglinear``
    skips that forward and interpolates between the behaviour and current logprobs by policy
    version; ``metrics`` recomputes and also logs how close each approximation would have been.
    """

    RECOMPUTE = "recompute"
    LOGLINEAR = "loglinear"
    METRICS = "metrics"

    def skips_forward_pass(self) -> bool:
        """True when the proximal logprobs come from an approximation, not a forward pass."""
        return self is ProxLogpMethod.LOGLINEAR


class ProxApproxMethod(StrEnum):
    """The approximations of the proximal logprobs (``compute_prox_logp_approximations``)."""

    LOGLINEAR = "loglinear"
    LINEAR = "linear"
    ROLLOUT = "rollout"


# Plain-string spellings, as AReaL exports them (configs hold strings).
PROX_LOGP_METHOD_RECOMPUTE = ProxLogpMethod.RECOMPUTE.value
PROX_LOGP_METHOD_LOGLINEAR = ProxLogpMethod.LOGLINEAR.value
PROX_LOGP_METHOD_METRICS = ProxLogpMethod.METRICS.value
PROX_LOGP_METHODS_ALL = [m.value for m in ProxLogpMethod]

PROX_APPROX_METHOD_LOGLINEAR = ProxApproxMethod.LOGLINEAR.value
PROX_APPROX_METHOD_LINEAR = ProxApproxMethod.LINEAR.value
PROX_APPROX_METHOD_ROLLOUT = ProxApproxMethod.ROLLOUT.value
PROX_APPROX_METHODS_ALL = [m.value for m in ProxApproxMethod]
