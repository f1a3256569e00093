# SPDX-License-Identifier: Apache-2.0
"""The trainer's refusal of its input, in a module of its own so that every trainer module
(the learner's optimizer check as well as the loop) can raise it without importing the loop."""

from __future__ import annotations


class TrainingInputError(ValueError):
    """The workflow, dataset or settings cannot be trained on; the message says what to fix."""
