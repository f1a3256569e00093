from _common import ask_model
from pydantic import BaseModel, TypeAdapter

EXPECTED = "clean"


class Step(BaseModel):
    name: str
    args: dict[str, list[int | float | str]]


class Agent:
    adapter: TypeAdapter | None = None

    async def run(self, data, **extra_kwargs):
        if Agent.adapter is None:
            Agent.adapter = TypeAdapter(dict[str, list[Step]])
        Agent.adapter.validate_python({"plan": [{"name": "add", "args": {"x": [1, 2]}}]})
        return await ask_model(extra_kwargs, data)
