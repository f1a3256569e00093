# SPDX-License-Identifier: Apache-2.0
"""pytest plugin (entry point ``pytest11``): fixtures for testing rollout workflows offline.

Fixtures: ``tiny_tokenizer``, ``scripted_engine`` (factory), ``local_engine``,
``inline_rewards``, ``agent_proxy``, ``run_episode``, ``loop_stall_check`` and
``consistency_check``. Imports are lazy so the plugin costs nothing in test runs that do not use
it. Options: ``--areal-stall`` = ``fail`` (default) | ``warn`` | ``off`` and
``--areal-stall-threshold-ms`` (default 100).

``consistency_check(workflow, rows)`` runs the workflow (instance, or an agent) over ``rows`` (a
dict or a list) on ``local_engine`` and fails the test with a readable report unless every
trajectory is consistent with what the engine sampled: trained tokens are the sampled tokens
(EOS included), logprobs equal the engine's and a teacher-forced forward pass, only sampled
tokens are in the loss mask, each turn's prompt extends the last, versions are the engine's.
Call it from a plain ``def`` test; async tests use ``await consistency_check.arun(...)``.
``consistency_check.report(...)`` returns the ``ConsistencyReport`` without asserting. Extra
keyword arguments go to ``acheck_workflow`` (``group_size``, ``atol``, ``allow_untrained``,
``engine``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - pytest-asyncio comes with areal-devkit[runtime]
    pytest_asyncio = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("areal", "areal-devkit workflow testing")
    group.addoption(
        "--areal-stall",
        choices=["fail", "warn", "off"],
        default="fail",
        help="what a blocked event loop during run_episode does (default: fail)",
    )
    group.addoption(
        "--areal-stall-threshold-ms",
        type=float,
        default=100.0,
        help="how long the event loop may block before it counts as a stall (default: 100)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "areal_allow_stall: a blocked event loop does not fail this test"
    )


def _stall_settings(request: pytest.FixtureRequest) -> tuple[str, float]:
    mode = request.config.getoption("--areal-stall")
    if request.node.get_closest_marker("areal_allow_stall") is not None:
        mode = "warn"
    return mode, request.config.getoption("--areal-stall-threshold-ms") / 1000


@pytest.fixture(scope="session")
def tiny_tokenizer() -> Any:
    """The shipped 1k-vocab ChatML tokenizer (offline, loads in milliseconds)."""
    from areal_runtime.models.tokenizers import tiny_tokenizer as load

    return load()


@pytest.fixture
def scripted_engine(tiny_tokenizer: Any) -> Callable[..., Any]:
    """Factory: ``scripted_engine(script, **kw)`` -> a ScriptedEngine on ``tiny_tokenizer``."""
    from areal_runtime.engine.scripted import ScriptedEngine

    def make(script: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("tokenizer", tiny_tokenizer)
        return ScriptedEngine(script, **kwargs)

    return make


@pytest.fixture(scope="session")
def local_engine() -> Iterator[Any]:
    """A LocalEngine on the embedded default model, shared by the session."""
    from areal_runtime.engine.local import LocalEngine

    engine = LocalEngine.default()
    yield engine
    engine.close()


@pytest.fixture
def consistency_check(local_engine: Any) -> Any:
    """``consistency_check(workflow, rows)``: train-inference consistency on the local engine."""
    from areal_runtime.testing.consistency.checker import ConsistencyChecker

    return ConsistencyChecker(local_engine)


@pytest.fixture
def inline_rewards() -> Iterator[None]:
    """Every AsyncRewardWrapper built during the test runs its function inline."""
    from areal_runtime.api.reward_api import use_reward_mode

    with use_reward_mode("inline"):
        yield


@pytest.fixture
def run_episode(request: pytest.FixtureRequest) -> Any:
    """``await run_episode(workflow, data, engine=...)`` -> trajectory dict or None."""
    from areal_runtime.testing.episode import EpisodeRunner

    mode, threshold = _stall_settings(request)
    return EpisodeRunner(stall_mode=mode, stall_threshold_s=threshold)  # type: ignore[arg-type]


if pytest_asyncio is not None:

    @pytest_asyncio.fixture
    async def agent_proxy(scripted_engine: Callable[..., Any], tiny_tokenizer: Any) -> Any:
        """An AgentProxy on a scripted engine that answers "ok"; ``.engine`` is that engine."""
        from areal_runtime.experimental.openai.proxy import AgentProxy

        engine = scripted_engine(["ok"], cycle=True)
        async with AgentProxy(engine, tiny_tokenizer) as proxy:
            yield proxy

    @pytest_asyncio.fixture
    async def loop_stall_check(request: pytest.FixtureRequest) -> Any:
        """Watch the test's event loop; a stall fails the test at teardown."""
        from areal_runtime.infra.stall_detector import LoopStallDetector
        from areal_runtime.testing.episode import report_stalls

        mode, threshold = _stall_settings(request)
        detector = LoopStallDetector(threshold)
        detector.start()
        yield detector
        detector.stop()
        report_stalls(detector.stalls, mode)  # type: ignore[arg-type]
