# SPDX-License-Identifier: Apache-2.0
import subprocess
import sys

import pytest

from areal_runtime.api.engine_api import InferenceEngine
from areal_runtime.api.workflow_api import AgentWorkflow, RolloutWorkflow


def test_rollout_workflow_requires_arun_episode():
    class Incomplete(RolloutWorkflow):
        pass

    with pytest.raises(TypeError, match="arun_episode"):
        Incomplete()


def test_agent_workflow_warns_on_instantiation():
    class MyAgent(AgentWorkflow):
        async def run(self, data, **extra_kwargs):
            return 1.0

    with pytest.warns(DeprecationWarning, match="MyAgent inherits from deprecated AgentWorkflow"):
        MyAgent()


def test_engine_default_version_and_set_version():
    class Engine(InferenceEngine):
        async def agenerate(self, req):
            raise NotImplementedError

    assert Engine().get_version() == 0
    with pytest.raises(NotImplementedError, match="set_version"):
        Engine().set_version(1)


def test_importing_the_api_is_cheap():
    code = (
        "import sys, areal_runtime.api as api\n"
        "from areal_runtime.api import ModelRequest, ModelResponse, RolloutWorkflow\n"
        "from areal_runtime.api.reward_api import AsyncRewardWrapper\n"
        "import areal_runtime.workflow_context, areal_runtime.utils.data\n"
        "heavy = [m for m in ('torch', 'transformers', 'httpx', 'aiohttp', 'numpy') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_api_reexports_and_unknown_name():
    import areal_runtime.api as api

    assert api.RolloutWorkflow is RolloutWorkflow
    assert "AsyncRewardWrapper" in api.__all__ and "AsyncRewardWrapper" in dir(api)
    with pytest.raises(AttributeError, match="Nope"):
        _ = api.Nope
