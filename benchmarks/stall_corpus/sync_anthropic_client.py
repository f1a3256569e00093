from anthropic import Anthropic

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        base = extra_kwargs["base_url"].removesuffix("/v1")
        client = Anthropic(base_url=base, api_key=extra_kwargs["api_key"], max_retries=0)
        try:
            client.messages.create(  # blocks
                model="default", max_tokens=8, messages=data["messages"]
            )
        except Exception:
            return 0.0
        return 1.0
