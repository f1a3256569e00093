"""Helpers that take the client as a typed argument or keep it on a dataclass."""

from dataclasses import dataclass

import httpx


@dataclass
class SandboxClient:
    client: httpx.AsyncClient
    base: str = "http://sandbox:8080"

    async def run_code(self, code):
        http = self.client
        resp = http.post(f"{self.base}/run", json={"code": code})
        return resp.json()["stdout"]  # ARL203: resp

    async def reset(self):
        self.client.delete(f"{self.base}/session")  # ARL201: self.client.delete


async def submit(client: httpx.AsyncClient, answer):
    r = client.post("http://grader/submit", json={"answer": answer})
    print("submitted", r)  # ARL203: r
    return None


class SandboxAgent:
    def __init__(self):
        self.sandbox = SandboxClient(httpx.AsyncClient())

    async def arun_episode(self, engine, data):
        out = await self.sandbox.run_code(data["code"])
        await submit(self.sandbox.client, out)
        return out
