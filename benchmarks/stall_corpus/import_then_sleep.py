import time

from _common import ask_model

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        import sympy  # first import: the library's, excused

        time.sleep(0.15)  # blocks
        return await ask_model(extra_kwargs, data) + 0 * len(sympy.__name__)
