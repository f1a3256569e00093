"""An RLVR agent that scores answers with an LLM judge behind a plain HTTP endpoint."""

import httpx

from areal.api.workflow_api import RolloutWorkflow

JUDGE_URL = "http://judge:8000/v1/score"


class JudgeWorkflow(RolloutWorkflow):
    def __init__(self, gconfig, tokenizer):
        self.gconfig = gconfig
        self.tokenizer = tokenizer
        self.client = httpx.AsyncClient(timeout=60)

    async def score(self, question, answer):
        resp = self.client.post(JUDGE_URL, json={"q": question, "a": answer})
        resp.raise_for_status()  # ARL203: resp
        return resp.json()["score"]

    async def arun_episode(self, engine, data):
        req = self.gconfig.new_request(data["prompt_ids"])
        out = await engine.agenerate(req)
        text = self.tokenizer.decode(out.output_tokens)
        reward = await self.score(data["question"], text)
        self.client.post(JUDGE_URL + "/log", json={"text": text, "reward": reward})  # ARL201: self.client.post
        return {"input_ids": out.input_tokens + out.output_tokens, "rewards": reward}

    async def aclose(self):
        await self.client.aclose()
