# SPDX-License-Identifier: Apache-2.0
"""Workflow contracts (AReaL's ``areal.api.workflow_api``).

A workflow is either a ``RolloutWorkflow`` subclass with ``arun_episode(engine, data)`` or any
object with ``async def run(self, data, **extra_kwargs)`` (an agent that talks to the
OpenAI-compatible proxy).
"""

from __future__ import annotations

import abc
import warnings
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from areal_runtime.api.engine_api import InferenceEngine


class RolloutWorkflow(abc.ABC):
    """One episode of rollout: generate with ``engine`` for one dataset row ``data``.

    Return a trajectory (a dict of tensors shaped ``[1, L]`` plus ``rewards`` shaped ``[1]``),
    ``None`` to reject the episode, or a dict of interactions keyed by completion id.
    """

    @abc.abstractmethod
    async def arun_episode(
        self, engine: InferenceEngine, data: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Run one episode; raising or returning ``None`` rejects it."""


class _WarnOnInstantiation(abc.ABCMeta):
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{cls.__name__} inherits from deprecated AgentWorkflow: drop the base class and "
            "keep `async def run(self, data, **extra_kwargs)`; any object with such a method "
            "is an agent workflow",
            DeprecationWarning,
            stacklevel=2,
        )
        return super().__call__(*args, **kwargs)


class AgentWorkflow(metaclass=_WarnOnInstantiation):
    """Deprecated base for agent workflows; a plain class with ``async def run`` is enough.

    ``run`` returns a float (the reward of the last completion) or a dict mapping completion
    id to reward.
    """

    @abc.abstractmethod
    async def run(self, data: dict[str, Any], **extra_kwargs: Any) -> float | dict[str, float]:
        """Run the agent using ``extra_kwargs`` = ``{base_url, http_client, api_key}``."""


WorkflowLike = Union[RolloutWorkflow, type[RolloutWorkflow], str, Any]  # noqa: UP007
