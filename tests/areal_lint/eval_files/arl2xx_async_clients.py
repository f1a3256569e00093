"""Un-awaited calls on any async client (issue 37): httpx, aiohttp, the SDKs, the runtime's."""

import asyncio

import aiohttp
import anthropic
import httpx
from openai import AsyncOpenAI

from areal import workflow_context  # ARG --select=ARL2
from areal.experimental.openai import ArealOpenAI


class HttpxAgent:
    def __init__(self):
        self.client = httpx.AsyncClient(timeout=30)

    async def arun_episode(self, engine, data):
        self.client.post("http://judge/score", json=data)  # ARL201: self.client.post
        r = self.client.post("http://judge/score", json=data)
        score = r.json()["score"]  # ARL203: r
        c = await workflow_context.get_httpx_client()
        pending = c.get("http://tools/search")  # ARL202: pending
        if c.get("http://health"):  # ARL203: c.get()
            pass
        resp = await c.post("http://judge", json=data)
        async with c.stream("GET", "http://big") as stream:
            stream.aread()  # ARL201: stream.aread
        return score, resp.json()

    async def made_in_place(self, url):
        async with httpx.AsyncClient() as client:
            client.get(url)  # ARL201: client.get
            _ = client.delete(url)  # ARL201: client.delete
            return (await client.get(url)).text

    async def annotated(self, client: httpx.AsyncClient, url):
        body = client.get(url)
        return body.text  # ARL203: body


class AiohttpAgent:
    def __init__(self):
        self.session = aiohttp.ClientSession()

    async def arun_episode(self, engine, data):
        session = await workflow_context.get_aiohttp_session()
        session.post("http://judge", json=data)  # ARL201: session.post
        self.session.get("http://x")  # ARL201: self.session.get
        async with session.post("http://judge", json=data) as resp:
            verdict = resp.json()
            ok = verdict["ok"]  # ARL203: verdict
        raw = await session.get("http://x")
        text = raw.text()  # ARL202: text
        ws = await session.ws_connect("ws://x")
        ws.send_str("hi")  # ARL201: ws.send_str
        return ok

    async def proper(self, session: aiohttp.ClientSession):
        async with session.get("http://x") as resp:
            return await resp.json()


class SdkAgents:
    def __init__(self, engine, tokenizer):
        self.claude = anthropic.AsyncAnthropic()
        self.areal = ArealOpenAI(engine=engine, tokenizer=tokenizer)

    async def arun_episode(self, engine, data):
        self.claude.messages.create(model="m", max_tokens=8, messages=[])  # ARL201: self.claude.messages.create
        self.areal.chat.completions.create(messages=[])  # ARL201: self.areal.chat.completions.create
        oai = AsyncOpenAI(http_client=await workflow_context.get_httpx_client())
        n = oai.responses.create(model="m", input="x")
        print(n)  # ARL203: n
        await workflow_context.close_shared_clients()
        workflow_context.get_sdk_http_client()  # ARL201: workflow_context.get_sdk_http_client
        return await self.areal.chat.completions.create(messages=[])


class EventLoops:
    def __init__(self):
        self._loop = asyncio.get_event_loop()
        self.tasks = set()

    async def flush(self):
        return None

    async def arun_episode(self, engine, data, tg: asyncio.TaskGroup):
        loop = asyncio.get_running_loop()
        loop.create_task(self.flush())  # ARL204: loop.create_task
        asyncio.get_running_loop().create_task(self.flush())  # ARL204: asyncio.get_running_loop().create_task
        self._loop.create_task(self.flush())  # ARL204: self._loop.create_task
        _ = loop.create_task(self.flush())  # ARL204: loop.create_task
        asyncio.ensure_future(self.flush())  # ARL204: asyncio.ensure_future
        tg.create_task(self.flush())
        task = loop.create_task(self.flush())
        self.tasks.add(loop.create_task(self.flush()))
        return task


class AsyncioPrimitives:
    """asyncio's own objects: a queue, a lock, an event, a child process, a stream."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.lock = asyncio.Lock()
        self.ready = asyncio.Event()
        self.slots = asyncio.Semaphore(4)

    async def arun_episode(self, engine, data, writer: asyncio.StreamWriter):
        self.queue.put(data)  # ARL201: self.queue.put
        self.lock.acquire()  # ARL201: self.lock.acquire
        self.ready.wait()  # ARL201: self.ready.wait
        self.slots.acquire()  # ARL201: self.slots.acquire
        results = asyncio.Queue(maxsize=8)
        results.get()  # ARL201: results.get
        item = await results.get()
        proc = await asyncio.create_subprocess_exec("ls", stdout=asyncio.subprocess.PIPE)
        proc.wait()  # ARL201: proc.wait
        out, _ = await proc.communicate()
        writer.write(out)
        writer.drain()  # ARL201: writer.drain
        self.queue.put_nowait(item)
        self.lock.release()
        self.ready.set()
        proc.kill()
        async with self.lock:
            await self.queue.join()
        return out
