"""An agent on the OpenAI SDK over the proxy's shared http client, closed by hand."""

from openai import AsyncOpenAI


class SdkAgent:
    async def run(self, data, **extra_kwargs):
        http_client = extra_kwargs["http_client"]
        client = AsyncOpenAI(
            base_url=extra_kwargs["base_url"], api_key="none", http_client=http_client
        )
        try:
            completion = await client.chat.completions.create(
                model="default", messages=data["messages"]
            )
            client.chat.completions.create(model="default", messages=[])  # ARL201: client.chat.completions.create
            return completion.choices[0].message.content
        finally:
            await client.close()  # ARL306: client.close(), do not close it, the workflow owns and closes the shared client
