import json
import os
import tempfile

from _common import ask_model

EXPECTED = "stall"
RECORDS = [{"id": i, "text": "token " * 20, "scores": list(range(10))} for i in range(40_000)]


class Agent:
    async def run(self, data, **extra_kwargs):
        path = os.path.join(tempfile.gettempdir(), f"corpus-{os.getpid()}-{id(data)}.json")
        with open(path, "w") as out:
            json.dump(RECORDS, out)  # blocks
        os.remove(path)
        return await ask_model(extra_kwargs, data)
