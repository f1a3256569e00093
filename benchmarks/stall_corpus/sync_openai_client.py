from openai import OpenAI

EXPECTED = "stall"


class Agent:
    async def run(self, data, **extra_kwargs):
        client = OpenAI(
            base_url=extra_kwargs["base_url"], api_key=extra_kwargs["api_key"], max_retries=0
        )
        try:
            client.chat.completions.create(model="default", messages=data["messages"])  # blocks
        except Exception:
            return 0.0
        return 1.0
