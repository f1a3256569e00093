# SPDX-License-Identifier: Apache-2.0
"""Every exception the runtime raises on purpose, one base class per area.

Catch an area's base to handle all its failures (``except EngineError``), or
``ArealRuntimeError`` for anything the runtime reports. Classes that also answer to a builtin
(``ValueError``, ``KeyError``, ``ConnectionError``) keep that base, so code written against the
builtin keeps working::

    ArealRuntimeError
    ├── EngineError                    an inference engine could not serve a request
    │   ├── EngineDeadError            LocalEngine's worker thread died or the engine is closed
    │   ├── ScriptExhaustedError       ScriptedEngine ran out of scripted completions
    │   ├── ServerUnreachableError     RemoteEngine: no server answered (also ConnectionError)
    │   └── MalformedResponseError     RemoteEngine: a server's answer breaks its protocol
    │                                  (also ValueError)
    ├── RewardError                    AsyncRewardWrapper could not produce a reward
    │   ├── RewardFunctionError        the function raised, returned a non-number, or crashed
    │   └── RewardTimeoutError         the function ran past ``timeout_seconds``
    ├── ProxyError                     the agent proxy refused or failed a request
    │   ├── ProxyHTTPError             answered to the agent with an HTTP status
    │   ├── InvalidRequestError        a request body the proxy refuses with 400 (also ValueError)
    │   ├── UnknownCompletionError     a reward names a completion id the session never made
    │   │                              (also KeyError)
    │   └── AgentRunError              a subprocess agent raised, crashed or hung in its worker
    ├── TrajectoryError                a trajectory breaks the trainer's contract (also ValueError)
    └── EpisodeRejected                the executor rejected an episode (carries the reason)
"""

from __future__ import annotations

from typing import Literal

RejectReason = Literal["exception", "none", "empty", "should_accept", "invalid"]


class ArealRuntimeError(Exception):
    """Base of every exception the runtime raises on purpose."""


class EngineError(ArealRuntimeError):
    """An inference engine could not serve a request."""


class EngineDeadError(EngineError, RuntimeError):
    """The engine's worker thread died, or the engine was closed; it serves no more requests."""


class ScriptExhaustedError(EngineError, RuntimeError):
    """Every scripted completion was used and ``cycle`` is off."""


class ServerUnreachableError(EngineError, ConnectionError):
    """No inference server answered after the retries."""


class MalformedResponseError(EngineError, ValueError):
    """A server's answer does not follow its protocol (missing fields, unequal lengths)."""


class RewardError(ArealRuntimeError, RuntimeError):
    """Base of the errors raised by ``AsyncRewardWrapper``."""


class RewardFunctionError(RewardError):
    """The reward function raised, returned a non-number, or could not run in a worker."""


class RewardTimeoutError(RewardError):
    """The reward function did not finish within ``timeout_seconds``."""


class ProxyError(ArealRuntimeError):
    """The agent proxy refused or failed a request."""


class ProxyHTTPError(ProxyError):
    """A failure the proxy answers with an HTTP status and an OpenAI-style error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class InvalidRequestError(ProxyError, ValueError):
    """A request body the proxy refuses with HTTP 400; the message names the field."""


class UnknownCompletionError(ProxyError, KeyError):
    """A reward names a completion id the session never produced."""

    def __str__(self) -> str:
        return str(self.args[0])


class AgentRunError(ProxyError):
    """A subprocess agent raised, crashed or ran past its timeout; its worker was replaced."""


class TrajectoryError(ArealRuntimeError, ValueError):
    """A trajectory that breaks the contract the trainer relies on; lists every violation."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid trajectory:\n  - " + "\n  - ".join(problems))


class EpisodeRejected(ArealRuntimeError):
    """The executor rejected an episode; ``reason`` says which rule, the message says why."""

    def __init__(self, reason: RejectReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
