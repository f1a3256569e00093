"""A web-browsing tool that opens its own aiohttp session on every call (the episode calls it:
ARL301, not ARL302)."""

import aiohttp


async def browse(url, timeout=30):
    async with aiohttp.ClientSession() as session:  # ARL301: aiohttp.ClientSession
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
            html = resp.text()
            return len(html)  # ARL203: html


class BrowseAgent:
    async def arun_episode(self, engine, data):
        session = aiohttp.ClientSession()  # ARL301: aiohttp.ClientSession
        resp = await session.post("http://judge/score", json=data)
        verdict = resp.json()  # ARL202: verdict
        size = await browse(data["url"])
        await session.close()
        return size
