import urllib.request

from _common import ask_model, slow_server_url

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        with urllib.request.urlopen(slow_server_url(), timeout=10) as reply:  # blocks
            reply.read()
        return await ask_model(extra_kwargs, data)
