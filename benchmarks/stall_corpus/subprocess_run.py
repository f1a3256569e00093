import subprocess

from _common import ask_model

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        subprocess.run(["sleep", "0.2"], check=True)  # blocks
        return await ask_model(extra_kwargs, data)
