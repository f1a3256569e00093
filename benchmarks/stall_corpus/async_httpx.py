from _common import ask_model, slow_server_url

from areal_runtime import workflow_context

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        client = await workflow_context.get_httpx_client()
        await client.get(slow_server_url(), timeout=10)
        return await ask_model(extra_kwargs, data)
