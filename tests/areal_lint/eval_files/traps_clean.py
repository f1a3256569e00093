"""False-positive traps from the spec: correct code that must stay silent."""

import asyncio
import functools
import json
import os
import threading
from typing import Optional, Union

import aiofiles
import httpx
import requests

from areal import workflow_context
from areal.api import AsyncRewardWrapper

_SHARED = None


def reward_fn(completion, answer=None, weight=1.0):
    return float(completion == answer)


def parse_judge_result(text):
    return float("yes" in text)


def _get_client():
    global _SHARED
    if _SHARED is None:
        _SHARED = httpx.AsyncClient()
    return _SHARED


class GoodWorkflow:
    def __init__(self, reward_fn, tokenizer):
        self.reward_fn = reward_fn
        self.tokenizer = tokenizer
        self.async_reward_fn = None
        with open("config.json") as f:
            self.config = json.load(f)

    async def arun_episode(self, engine, data):
        if isinstance(self.reward_fn, str) or self.async_reward_fn is None:
            self.async_reward_fn = AsyncRewardWrapper(self.reward_fn)
        client = await workflow_context.get_httpx_client()
        async with aiofiles.open(data["path"]) as f:
            text = await f.read()
        path = os.path.join("a", "b")
        resp = await engine.agenerate(data)
        version = engine.get_version()
        reward = await self.async_reward_fn(text, resp)
        reward_from_judge = parse_judge_result(text)  # a text helper, not a reward function
        blob = json.dumps({"r": reward})
        await asyncio.to_thread(functools.partial(reward_fn, "a", "b"))
        rewards = [reward]
        total = sum(rewards)
        await asyncio.sleep(0)
        proc = await asyncio.create_subprocess_exec("ls")
        return client, path, version, blob, total, proc, reward_from_judge


class Tool:
    async def run(self, **kwargs):
        return kwargs


def main():
    asyncio.run(asyncio.sleep(0))
    with open("x") as f:
        return f.read()


def sync_code():
    import time

    time.sleep(1)
    return open("x").read()


class StreamingAgent:
    """An async generator returns no coroutine; subprocess result/error classes run nothing."""

    async def turns(self, data):
        for turn in data:
            yield turn

    async def run(self, data, **kwargs):
        import subprocess

        stream = self.turns(data)
        try:
            async for turn in stream:
                if turn is None:
                    raise subprocess.CalledProcessError(1, "tool")
        finally:
            await stream.aclose()
        return subprocess.CompletedProcess(["tool"], 0)


async def get_client(**kwargs):
    """A factory: the caller keeps the session."""
    import aiohttp

    return aiohttp.ClientSession(**kwargs)


class Connector:
    async def connect(self):
        self.session = httpx.AsyncClient()  # kept on the object and reused


class RewardRouting:
    """Code around rewards that is not a reward function call."""

    async def arun_episode(self, engine, data):
        from rllm.trainer.algorithms import collect_reward_and_advantage
        from verl.trainer.ppo.reward import compute_reward_async

        reward_worker = self.choose_reward_worker()
        future_reward = compute_reward_async.remote(data, self.config)
        reward_metrics = collect_reward_and_advantage(data)
        return reward_worker, future_reward, reward_metrics


class SplatAgent:
    """The agent's kwargs carry http_client: ``AsyncOpenAI(**extra_kwargs)`` shares the pool."""

    async def run(self, data, **extra_kwargs):
        from openai import AsyncOpenAI

        client = AsyncOpenAI(**extra_kwargs, max_retries=0)
        return await client.chat.completions.create(model="m", messages=data["messages"])


async def call_the_app_in_process(app):
    """A client over an in-process transport opens no connections: no pool to share."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        first = await http.get("/")
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda r: None)) as http:
        second = await http.get("/")
    return first, second


class TypedAsyncClients:
    """Receivers whose annotated type is async, or blocking work handed to a thread."""

    def __init__(self, http: httpx.AsyncClient, session: "requests.Session", log_path: str):
        from langchain_openai import ChatOpenAI

        self.http = http
        self.session = session
        self.llm = ChatOpenAI(http_async_client=http)
        self.log_path = log_path

    async def arun_episode(self, engine, data):
        import io
        import queue
        import threading

        r = await self.http.get("http://x")
        reply = await self.llm.ainvoke(data["messages"])
        async for chunk in self.llm.astream(data["messages"]):
            print(chunk)
        buf = io.StringIO()
        buf.write("in memory")
        done = queue.SimpleQueue()
        done.put(r)
        lock = asyncio.Lock()
        async with lock:
            pass
        headers = {"a": "b"}
        headers.get("a")
        await asyncio.to_thread(self.session.get, "http://x")
        await asyncio.to_thread(self.llm.invoke, data["messages"])
        event = threading.Event()
        await asyncio.to_thread(event.wait, 1.0)
        return r, reply, buf.getvalue()


async def typed_async_params(client: httpx.AsyncClient, llm: "AsyncOpenAI", f, path):
    from pathlib import Path

    import aiofiles
    from openai import AsyncOpenAI
    from openai.types import Completion

    r = await client.get("http://x")
    c: Completion = await llm.completions.create(model="m", prompt="x")
    async with aiofiles.open(path) as af:
        text = await af.read()
    await asyncio.to_thread(f.read)
    p = Path(path) / "x"
    return r, c, text, p.with_suffix(".json").name, AsyncOpenAI


def sync_only_reporting(client: "requests.Session", f: "typing.TextIO"):
    """A sync helper that no episode reaches: blocking is fine here."""
    f.write(client.get("http://x").text)


class SampledTrajectories:
    """AReaL's own idioms: sampled ids, the sampler's logprobs, a mask over the output only."""

    async def arun_episode(self, engine, data):
        import torch

        resp = await engine.agenerate(data)
        completion_str = self.tokenizer.decode(resp.output_tokens)
        reward = await self.async_reward_fn(completion_str, **data)
        n_tokens = len(self.tokenizer.encode(completion_str))  # measured, not trained
        seq = resp.input_tokens + resp.output_tokens
        logprobs = [0.0] * resp.input_len + resp.output_logprobs
        loss_mask = [0] * resp.input_len + [1] * resp.output_len
        versions = [-1] * resp.input_len + resp.output_versions
        rewards = [0.0] * len(resp.output_tokens)  # not logprobs
        return dict(
            input_ids=torch.tensor(seq),
            logprobs=torch.tensor(logprobs),
            loss_mask=torch.tensor(loss_mask),
            versions=torch.tensor(versions),
            attention_mask=torch.ones(len(seq), dtype=torch.bool),
            rewards=torch.tensor(reward),
            n_tokens=n_tokens,
            token_rewards=rewards,
        )

    async def multi_turn(self, engine, data):
        """Each turn's prompt is re-templated and given to the model; the trained ids are the
        sampled ones, accumulated turn by turn (AReaL's MultiTurnWorkflow)."""
        from areal.api.io_struct import ModelRequest

        messages = list(data["messages"])
        seq, logprobs, loss_mask = [], [], []
        context_ids = list(data["prompt_ids"])
        completion_logps = [0.0] * len(context_ids)
        for _ in range(3):
            input_ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
            resp = await engine.agenerate(ModelRequest(input_ids=input_ids))
            text = self.tokenizer.decode(resp.output_tokens)
            messages.append({"role": "assistant", "content": text})
            context_ids.extend(resp.output_tokens)
            completion_logps.extend(resp.output_logprobs)
            input_len = len(resp.input_tokens) - len(seq)
            seq += resp.input_tokens[-input_len:] + resp.output_tokens
            logprobs += [0.0] * input_len + resp.output_logprobs
            loss_mask += [0] * input_len + [1] * resp.output_len
        return {"input_ids": seq, "logprobs": logprobs, "loss_mask": loss_mask}


# ---- typed blocking objects (issue 22): what must stay silent ---------------------------------
HTTP_POOL = httpx.Client()
SHARED_LOG = open("log.txt", "a")  # module level: runs once at import, not on the loop


async def typed_globals_shadowed_and_async_twins(url, sock):
    HTTP_POOL = await workflow_context.get_httpx_client()  # a local shadows the global
    await HTTP_POOL.get(url)
    SHARED_LOG = aiofiles  # rebound to an async library: not a file any more
    await SHARED_LOG.open(url)
    reader = lambda f: f.read()  # noqa: E731 - its body runs where it is called, not here
    client: httpx.AsyncClient = await workflow_context.get_httpx_client()
    request = client.build_request("GET", url)
    await client.send(request)
    return reader, request


async def socket_setup_is_not_io(host):
    import socket

    sock = socket.socket()
    sock.setblocking(False)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (host, 80))
    return sock.getsockname()


class CoroutinesHandedOnCorrectly:
    """Un-awaited coroutines that reach something that awaits them (issue 22)."""

    def __init__(self):
        self.async_reward_fn = AsyncRewardWrapper(reward_fn)

    async def fetch(self, key):
        return key

    def make(self, key):
        return self.fetch(key)  # a sync factory returns the coroutine for its caller to await

    async def gathered(self, items):
        rewards = [self.async_reward_fn(item, "c") for item in items]
        pending = {"a": self.fetch("a"), "b": self.fetch("b")}
        tasks = []
        for item in items:
            tasks.append(self.fetch(item))
        first = self.fetch("first")
        chosen = first if items else self.fetch("other")
        results = await asyncio.gather(*rewards, *pending.values(), *tasks)
        timed = await asyncio.wait_for(self.async_reward_fn("p", "c"), timeout=5)
        task = asyncio.create_task(self.fetch("t"))
        helper_result = await self.run_later(self.fetch("h"))
        return results, timed, await task, await chosen, helper_result

    async def run_later(self, coro):
        return await coro

    async def awaited_in_a_loop(self, items):
        pending = [self.fetch(item) for item in items]
        out = []
        for coro in pending:
            out.append(await coro)
        return {"values": out, "first": await self.fetch("x")}

    async def route(self, data):
        """Not an episode: an async def may hand a coroutine back on purpose (litellm's
        route_request, whose caller wraps it in create_task)."""
        if data:
            return self.fetch(data)
        searches = [self.fetch(item) for item in data]
        print(len(searches), "searches")  # counting coroutines does not read them
        return await asyncio.gather(*searches)


async def spooled_buffers(image):
    import tempfile

    spool = tempfile.SpooledTemporaryFile(1 << 20)  # in memory until 1 MiB
    spool.write(image)
    spool.seek(0)
    return spool


async def around_a_reward_not_a_reward(session, trace, task, verdicts, criteria):
    """Seen in verifiers, verl and AReaL's data proxy: names near rewards that compute none."""
    from verifiers.v1.judge import judge_question, judge_response
    from verifiers.v1.judges.rubric import score_verdicts

    question = judge_question(task, "question")
    response = judge_response(trace, "last")
    scores = score_verdicts(verdicts, criteria, "rubric")
    reward_result = session.set_reward(scores)

    @reward_fn(weight=1.0)
    def solved(state):
        return 1.0

    return question, response, reward_result, solved


class RolloutWorker:
    """TRL's async rollout worker: one session for the worker's whole life, kept on self."""

    async def _run_loops(self, stop_event):
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=8)) as session:
            self.session = session
            await self._generate_loop(stop_event)

    async def _generate_loop(self, stop_event):
        while not stop_event.is_set():
            await self.session.get("http://x")


class PausableAgent:
    """camel's ChatAgent: an event that may be either kind, awaited when it is asyncio's."""

    def __init__(self, pause_event: Optional[Union[threading.Event, asyncio.Event]] = None):
        self.pause_event = pause_event

    async def step(self, session: requests.Session):
        if isinstance(self.pause_event, asyncio.Event):
            await self.pause_event.wait()
        await session.get("http://x")  # awaited: an async session despite the annotation


async def optional_client_replaced_by_an_async_one(url, client: Optional[httpx.Client] = None):
    """A declared sync type, then an async client: entered with async with / async for."""
    client = client or await workflow_context.get_httpx_client()
    async with client.stream("GET", url) as response:
        async for chunk in response.aiter_bytes():
            print(chunk)
    await client.get(url)


class RerenderedOnlyForTheReward:
    """The re-rendered conversation is text for a judge; the trained ids are the sampled ones."""

    async def arun_episode(self, engine, data):
        from areal.api.io_struct import ModelRequest

        messages = list(data["messages"])
        resp = None
        for _ in range(2):
            ids = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
            resp = await engine.agenerate(ModelRequest(input_ids=ids))
            text = self.tokenizer.decode(resp.output_tokens)
            messages = messages + [{"role": "assistant", "content": text}]
        transcript = self.tokenizer.apply_chat_template(messages, tokenize=False)
        reward = await self.judge(transcript)
        seq = resp.input_tokens + resp.output_tokens
        return {"input_ids": seq, "rewards": reward}
