import time

import httpx
from _common import ask_model

EXPECTED = "stall"


class Agent:
    client: httpx.AsyncClient | None = None

    async def run(self, data, **extra_kwargs):
        if Agent.client is None:
            Agent.client = httpx.AsyncClient(timeout=10)  # TLS set-up once: the library's
        time.sleep(0.3)  # blocks
        return await ask_model(extra_kwargs, data)
