import asyncio
import os
import tempfile

from _common import ask_model

EXPECTED = "clean"
# A large write in a thread: file I/O releases the GIL, so the loop keeps running. (json.dumps
# in a thread does not: its C encoder holds the GIL for the whole dump, and the loop stalls
# anyway; a process pool is the way to move that off the loop.)
BLOB = b"x" * 30_000_000


class Agent:
    async def run(self, data, **extra_kwargs):
        path = os.path.join(tempfile.gettempdir(), f"corpus-{os.getpid()}-{id(data)}.bin")
        await asyncio.to_thread(_write, path)
        return await ask_model(extra_kwargs, data)


def _write(path: str) -> None:
    with open(path, "wb") as out:
        out.write(BLOB)
    os.remove(path)
