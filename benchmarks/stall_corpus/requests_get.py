import requests
from _common import ask_model, slow_server_url

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        hint = requests.get(slow_server_url(), timeout=10).text  # blocks
        return await ask_model(extra_kwargs, data) + 0 * len(hint)
