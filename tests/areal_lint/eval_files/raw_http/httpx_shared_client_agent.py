"""A tool-calling agent that uses the workflow's shared httpx client for its tools."""

import json

from areal import workflow_context

TOOLS_URL = "http://tools:9000"


async def call_tool(name, arguments):
    client = await workflow_context.get_httpx_client()
    r = client.post(f"{TOOLS_URL}/{name}", json=arguments)
    if r.status_code != 200:  # ARL203: r
        return {"error": r.status_code}
    return r.json()


async def lookup(key):
    client = await workflow_context.get_httpx_client()
    raw = client.get(f"{TOOLS_URL}/kv/{key}")
    return json.loads(raw)  # ARL203: raw


class ToolAgent:
    async def arun_episode(self, engine, data):
        client = await workflow_context.get_httpx_client()
        client.post(f"{TOOLS_URL}/reset", json={"episode": data["id"]})  # ARL201: client.post
        result = await call_tool("search", {"q": data["question"]})
        health = client.get(f"{TOOLS_URL}/health")  # ARL202: health
        return result
