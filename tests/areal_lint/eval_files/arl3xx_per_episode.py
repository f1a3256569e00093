import aiohttp
import httpx
import tiktoken
from concurrent.futures import ThreadPoolExecutor
from openai import AsyncOpenAI
from transformers import AutoTokenizer

from areal.api import AsyncRewardWrapper
from areal.experimental.openai import ArealOpenAI


def reward_fn(completion, answer):
    return 1.0


class Agent:
    def __init__(self):
        self.client = httpx.AsyncClient()
        self.wrapper = None
        self.tok = None

    async def run(self, data, **extra_kwargs):
        async with httpx.AsyncClient() as c:  # ARL301: httpx.AsyncClient
            pass
        session = aiohttp.ClientSession()  # ARL301: aiohttp.ClientSession
        client = AsyncOpenAI(base_url=extra_kwargs["base_url"])  # ARL304: AsyncOpenAI
        shared = AsyncOpenAI(http_client=extra_kwargs["http_client"])
        maybe = AsyncOpenAI(http_client=extra_kwargs.get("http_client"))  # ARL305
        wrapper = AsyncRewardWrapper(reward_fn)  # ARL303
        if self.wrapper is None:
            self.wrapper = AsyncRewardWrapper(reward_fn)
        tok = AutoTokenizer.from_pretrained("x")  # ARL310: transformers.AutoTokenizer.from_pretrained
        if self.tok is None:
            self.tok = AutoTokenizer.from_pretrained("x")
        enc = tiktoken.get_encoding("cl100k_base")  # ARL310: tiktoken.get_encoding
        with ThreadPoolExecutor() as pool:  # ARL311: ThreadPoolExecutor
            pass
        recorder = ArealOpenAI(engine=None, tokenizer=None)
        helper = self._prepare()
        return c, session, client, shared, maybe, wrapper, tok, enc, pool, recorder, helper

    def _prepare(self):
        return AutoTokenizer.from_pretrained("y")  # ARL310: transformers.AutoTokenizer.from_pretrained


async def search_tool(query):
    async with aiohttp.ClientSession() as s:  # ARL302: aiohttp.ClientSession
        return s, query


async def setup_clients():
    return httpx.AsyncClient()


class Judge:
    async def arun_episode(self, engine, data):
        from areal import workflow_context

        shared = await workflow_context.get_httpx_client()
        async with AsyncOpenAI(http_client=shared) as judge:  # ARL306: async with AsyncOpenAI(http_client=<shared>), assign the client instead of using async with
            pass
        async with AsyncOpenAI(http_client=await workflow_context.get_httpx_client()) as j2:  # ARL306: async with AsyncOpenAI(http_client=<shared>), assign the client instead of using async with
            pass
        owned = AsyncOpenAI(http_client=shared)
        return judge, j2, owned


class OptionalAgent:
    async def run(self, data, **extra_kwargs):
        http_client = extra_kwargs.get("http_client", None)
        client = AsyncOpenAI(http_client=http_client)  # ARL305
        return client


async def call_the_network_per_call(url):
    transport = httpx.AsyncHTTPTransport(retries=2)
    async with httpx.AsyncClient(transport=transport) as client:  # ARL302: httpx.AsyncClient
        return await client.get(url)


# ---- closing what the workflow owns (issue 37): close()/aclose() on a client over the shared one
class ClosesTheSharedClient:
    def __init__(self, http_client):
        self.judge = AsyncOpenAI(http_client=http_client)
        self.own = AsyncOpenAI(api_key="k")

    async def arun_episode(self, engine, data, **kwargs):
        from areal import workflow_context

        http_client = kwargs["http_client"]
        client = AsyncOpenAI(base_url="http://x", http_client=http_client)
        await client.close()  # ARL306: client.close(), do not close it, the workflow owns and closes the shared client
        await self.judge.close()  # ARL306: self.judge.close(), do not close it, the workflow owns and closes the shared client
        shared = await workflow_context.get_httpx_client()
        await shared.aclose()  # ARL306: shared.aclose(), do not close it, the workflow owns and closes the shared client
        session = await workflow_context.get_aiohttp_session()
        await session.close()  # ARL306: session.close(), do not close it, the workflow owns and closes the shared client
        async with await workflow_context.get_httpx_client() as entered:  # ARL306: async with await workflow_context.get_httpx_client(), assign the client instead of using async with
            pass
        async with AsyncOpenAI(http_client=http_client) as judge:  # ARL306: async with AsyncOpenAI(http_client=<shared>), assign the client instead of using async with
            await judge.close()
        return entered

    async def closes_its_own(self, url):
        await self.own.close()
        mine = httpx.AsyncClient(transport=httpx.ASGITransport(app=None))
        await mine.aclose()
        client = AsyncOpenAI(http_client=mine)
        await client.close()
        return url
