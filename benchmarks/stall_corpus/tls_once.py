import httpx
from _common import ask_model, slow_server_url

EXPECTED = "clean"


class Agent:
    client: httpx.AsyncClient | None = None

    async def run(self, data, **extra_kwargs):
        if Agent.client is None:  # built once, on first use: TLS set-up happens once
            Agent.client = httpx.AsyncClient(timeout=10)
        await Agent.client.get(slow_server_url())
        return await ask_model(extra_kwargs, data)
