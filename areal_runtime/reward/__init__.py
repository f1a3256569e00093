# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``areal.reward``: math answer checking with ``math_verify`` and the dataset rewards.

``MathVerifyWorker.verify`` parses both answers (plain expressions and LaTeX such as
``\\boxed{72}``) and compares them; it never raises (a bad answer scores 0.0). Its timeout
really bounds the call: AReaL's waits for the timed-out thread when its executor closes, so a
pathological expression still blocks for its whole duration.
"""

from __future__ import annotations

import logging
import threading

from areal_runtime.utils.lazy_exports import lazy_exports

logger = logging.getLogger("areal_runtime.reward")

__all__ = [
    "MathVerifyWorker",
    "clevr_count_70k_reward_fn",
    "geometry3k_reward_fn",
    "get_math_verify_worker",
    "gsm8k_reward_fn",
]

_LAZY_IMPORTS = {
    "gsm8k_reward_fn": "areal_runtime.reward.gsm8k",
    "geometry3k_reward_fn": "areal_runtime.reward.geometry3k",
    "clevr_count_70k_reward_fn": "areal_runtime.reward.clevr_count_70k",
}


class MathVerifyWorker:
    """Checks a response against a ground truth with ``math_verify``; 1.0 or 0.0."""

    def __init__(
        self,
        try_extract_without_anchor: bool = True,
        precision: int = 6,
        timeout: float | None = 5.0,
    ) -> None:
        try:
            from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig
        except ImportError as exc:
            raise ImportError(
                "areal_runtime.reward needs math-verify: pip install 'areal-devkit[runtime]'"
            ) from exc
        self.extraction = (
            ExprExtractionConfig(try_extract_without_anchor=try_extract_without_anchor),
            LatexExtractionConfig(),
        )
        self.precision = precision
        self.timeout = timeout

    def _verify(self, response: str, ground_truth: str) -> float:
        # Both timeouts off: math_verify's own use signal.alarm, which works in the main
        # thread only; the bound is enforced by verify() instead. Each worker process would
        # log math_verify's "Timeout is disabled" warning once: it is not the user's concern.
        from math_verify import grader, parser
        from math_verify.grader import verify
        from math_verify.parser import parse

        grader.TIMEOUT_WARNING_SHOWN = parser.TIMEOUT_WARNING_SHOWN = True

        gold = parse(ground_truth, extraction_config=self.extraction, parsing_timeout=None)
        pred = parse(response, extraction_config=self.extraction, parsing_timeout=None)
        if not gold or not pred:
            return 0.0
        same = verify(gold, pred, float_rounding=self.precision, timeout_seconds=None)
        return 1.0 if same else 0.0

    def verify(self, response: str, ground_truth: str) -> float:
        """1.0 when ``response`` holds the answer ``ground_truth``; 0.0 otherwise or on error."""
        if self.timeout is None:
            return self._guarded(response, ground_truth)
        result: list[float] = []
        thread = threading.Thread(
            target=lambda: result.append(self._guarded(response, ground_truth)),
            name="areal-math-verify",
            daemon=True,  # a timed-out check is abandoned, never waited for
        )
        thread.start()
        thread.join(self.timeout)
        if not result:
            logger.warning(
                "math_verify took longer than %ss on response=%.80r ground_truth=%.80r; scored 0.0",
                self.timeout,
                response,
                ground_truth,
            )
            return 0.0
        return result[0]

    def _guarded(self, response: str, ground_truth: str) -> float:
        try:
            return self._verify(response, ground_truth)
        except Exception:
            logger.warning(
                "math_verify failed on response=%.80r ground_truth=%.80r; scored 0.0",
                response,
                ground_truth,
                exc_info=True,
            )
            return 0.0


_worker: MathVerifyWorker | None = None


def get_math_verify_worker() -> MathVerifyWorker:
    """The process-wide default worker (built on first use)."""
    global _worker
    if _worker is None:
        _worker = MathVerifyWorker()
    return _worker


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_IMPORTS)
