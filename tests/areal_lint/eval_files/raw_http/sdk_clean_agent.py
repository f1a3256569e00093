"""A correct SDK agent over the shared transport: awaited calls, client assigned, never closed."""

from openai import AsyncOpenAI

from areal import workflow_context


class CleanSdkAgent:
    def __init__(self):
        self.own = AsyncOpenAI(api_key="k")

    async def run(self, data, **extra_kwargs):
        client = AsyncOpenAI(
            base_url=extra_kwargs["base_url"], http_client=extra_kwargs["http_client"]
        )
        completion = await client.chat.completions.create(model="m", messages=data["messages"])
        judge = AsyncOpenAI(http_client=await workflow_context.get_httpx_client())
        verdict = await judge.responses.create(model="m", input=completion.choices[0].message.content)
        async with client.chat.completions.stream(model="m", messages=[]) as stream:
            async for event in stream:
                print(event)
        async for model in client.models.list():
            print(model.id)
        return verdict.output_text

    async def shutdown(self):
        await self.own.close()
