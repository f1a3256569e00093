"""A correct raw-aiohttp agent: responses awaited inside async with, the shared session kept."""

import aiohttp

from areal import workflow_context


class CleanAiohttpAgent:
    def __init__(self):
        self.session = None

    async def _session(self):
        if self.session is None:
            self.session = await workflow_context.get_aiohttp_session()
        return self.session

    async def search(self, query):
        session = await self._session()
        async with session.post("http://retriever/search", json={"q": query}) as resp:
            resp.raise_for_status()
            payload = await resp.json()
        return payload["docs"]

    async def arun_episode(self, engine, data):
        docs = await self.search(data["question"])
        session = await workflow_context.get_aiohttp_session()
        resp = await session.get("http://env/obs")
        text = await resp.text()
        resp.release()
        ws = await session.ws_connect("ws://env/play")
        await ws.send_str("start")
        msg = await ws.receive()
        await ws.close()
        return {"docs": docs, "obs": text, "msg": msg.data}


async def probe(url):
    timeout = aiohttp.ClientTimeout(total=5)
    session = await workflow_context.get_aiohttp_session()
    async with session.get(url, timeout=timeout) as resp:
        return resp.status, await resp.read()
