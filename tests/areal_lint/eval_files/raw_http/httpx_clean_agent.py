"""A correct raw-httpx agent: every call awaited, the shared client reused, nothing closed."""

import asyncio

import httpx

from areal import workflow_context


class CleanHttpxAgent:
    def __init__(self):
        self.tasks = set()
        self.private = httpx.AsyncClient(base_url="http://metrics:9000")

    async def judge(self, client, question, answer):
        resp = await client.post("http://judge/score", json={"q": question, "a": answer})
        resp.raise_for_status()
        return resp.json()["score"]

    async def arun_episode(self, engine, data):
        client = await workflow_context.get_httpx_client()
        score = await self.judge(client, data["question"], data["answer"])
        async with client.stream("GET", "http://docs/big") as r:
            body = await r.aread()
        chunks = [client.get(f"http://docs/{i}") for i in range(3)]
        pages = await asyncio.gather(*chunks)
        task = asyncio.get_running_loop().create_task(self.report(score))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.report(score))
        text = pages[0].text
        return {"score": score, "n": len(body), "text": text}

    async def report(self, score):
        await self.private.post("/score", json={"score": score})

    async def aclose(self):
        await self.private.aclose()


def sync_probe(url):
    with httpx.Client() as client:
        return client.get(url).status_code
