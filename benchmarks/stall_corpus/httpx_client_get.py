import httpx
from _common import ask_model, slow_server_url

EXPECTED = "stall"
CLIENT = httpx.Client(timeout=10)


class Agent:
    async def run(self, data, **extra_kwargs):
        hint = CLIENT.get(slow_server_url()).text  # blocks
        return await ask_model(extra_kwargs, data) + 0 * len(hint)
