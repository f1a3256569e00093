from _common import ask_model

EXPECTED = "clean"


class Agent:
    async def run(self, data, **extra_kwargs):
        import sympy  # a first import: once per process, the library's

        return await ask_model(extra_kwargs, data) + 0 * len(sympy.__name__)
