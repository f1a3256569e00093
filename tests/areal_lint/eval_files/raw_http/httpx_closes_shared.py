"""An agent that tidies up after itself, and closes the client every episode shares."""

from areal import workflow_context


class TidyAgent:
    async def arun_episode(self, engine, data):
        client = await workflow_context.get_httpx_client()
        try:
            resp = await client.post("http://env/step", json=data)
            return resp.json()
        finally:
            await client.aclose()  # ARL306: client.aclose(), do not close it, the workflow owns and closes the shared client

    async def evaluate(self, data):
        async with await workflow_context.get_httpx_client() as client:  # ARL306: async with await workflow_context.get_httpx_client(), assign the client instead of using async with
            resp = await client.get("http://env/eval", params=data)
            return resp.json()
