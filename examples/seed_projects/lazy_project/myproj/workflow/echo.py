# SPDX-License-Identifier: Apache-2.0
"""An existing workflow of the seed project."""

from areal_runtime.api.workflow_api import RolloutWorkflow


class EchoWorkflow(RolloutWorkflow):
    async def arun_episode(self, engine, data):
        return None
