"""A search agent: aiohttp calls to a retrieval service through the shared session."""

from areal import workflow_context
from areal.api.workflow_api import RolloutWorkflow

RETRIEVER = "http://retriever:8001/search"


class SearchAgent(RolloutWorkflow):
    async def retrieve(self, query, topk=3):
        session = await workflow_context.get_aiohttp_session()
        async with session.post(RETRIEVER, json={"query": query, "topk": topk}) as resp:
            payload = resp.json()
            return [doc["text"] for doc in payload["docs"]]  # ARL203: payload

    async def fetch_page(self, url):
        session = await workflow_context.get_aiohttp_session()
        resp = await session.get(url)
        body = resp.text()
        return body[:4000]  # ARL203: body

    async def arun_episode(self, engine, data):
        docs = await self.retrieve(data["question"])
        session = await workflow_context.get_aiohttp_session()
        session.post(RETRIEVER + "/feedback", json={"q": data["question"]})  # ARL201: session.post
        return {"docs": docs}
