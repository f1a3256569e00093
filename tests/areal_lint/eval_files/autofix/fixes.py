import time
from typing import Callable, cast


def load(path, mode="r"):
    return path


class Workflow:
    async def helper(self):
        return 1

    async def arun_episode(self, engine, data):
        time.sleep(0.1)  # ARL110
        self.helper()  # ARL201
        data = await asyncio.to_thread(load(data["path"]))  # ARL140
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, cast(Callable[[], str], self.helper))
        data = await asyncio.to_thread(cast(Callable[[], str], load(data)))  # ARL140
        return await loop.run_in_executor(None, load(data, mode="rb"))
