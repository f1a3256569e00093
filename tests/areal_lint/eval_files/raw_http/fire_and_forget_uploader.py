"""A workflow that uploads each trajectory in the background while the episode returns."""

import asyncio

import httpx


class UploadingWorkflow:
    def __init__(self):
        self.client = httpx.AsyncClient(base_url="http://store:7000")
        self._loop = asyncio.get_event_loop()
        self._pending = set()

    async def upload(self, traj):
        resp = await self.client.put(f"/traj/{traj['id']}", json=traj)
        resp.raise_for_status()

    async def arun_episode(self, engine, data):
        traj = {"id": data["id"], "tokens": []}
        loop = asyncio.get_running_loop()
        loop.create_task(self.upload(traj))  # ARL204: loop.create_task
        asyncio.get_running_loop().create_task(self.upload(traj))  # ARL204: asyncio.get_running_loop().create_task
        self._loop.create_task(self.upload(traj))  # ARL204: self._loop.create_task
        asyncio.ensure_future(self.upload(traj))  # ARL204: asyncio.ensure_future
        task = loop.create_task(self.upload(traj))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return traj
