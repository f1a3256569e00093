import asyncio
import json
import os
import pickle
import shutil
import subprocess
import time
import time as t
from pathlib import Path
from subprocess import run as sh
from time import sleep
from typing import Callable, cast

import httpx
import requests
import torch
from openai import OpenAI


def load_prompt(path):
    with open(path) as f:  # ARL101: open
        return f.read()  # one defect, one finding: at the open


def only_from_init(path):
    return open(path).read()


class Workflow:
    def __init__(self, path):
        self.prompt = only_from_init(path)
        self.session = requests.Session()
        self.root = Path("/data")

    async def arun_episode(self, engine, data):
        text = load_prompt(data["path"])
        time.sleep(1)  # ARL110
        t.sleep(0.5)  # ARL110
        sleep(2)  # ARL110
        sh(["ls"])  # ARL111: subprocess.run
        subprocess.check_output(["ls"])  # ARL111: subprocess.check_output
        os.system("ls")  # ARL111: os.system
        os.makedirs("/tmp/x", exist_ok=True)  # ARL102: os.makedirs
        shutil.rmtree("/tmp/x")  # ARL102: shutil.rmtree
        os.path.join("a", "b")
        Path("x").read_text()  # ARL102: Path.read_text
        state = torch.load("ckpt.pt")  # ARL103: torch.load
        pickle.dump(state, data["f"])  # ARL103: pickle.dump
        json.dumps(state)
        json.load(data["f"])  # ARL103: json.load
        requests.get("http://x")  # ARL120: requests.get
        self.session.post("http://x")  # ARL120: requests.Session().post
        httpx.post("http://x")  # ARL120: httpx.post
        client = httpx.Client()  # a per-episode pool too: arl3xx_per_episode.py covers that
        client.get("http://x")  # ARL120: httpx.Client().get
        llm = OpenAI()  # ARL121: openai.OpenAI, use openai.AsyncOpenAI and await its calls
        engine.generate(data)  # ARL130: generate
        engine.get_version()
        asyncio.run(self.other())  # ARL131: asyncio.run, await the coroutine instead
        await asyncio.to_thread(load_prompt(data["path"]))  # ARL140: load_prompt, asyncio.to_thread(load_prompt, data["path"])
        await asyncio.to_thread(load_prompt, data["path"])
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, load_prompt(data["path"]))  # ARL140: load_prompt, loop.run_in_executor(None, load_prompt, data["path"])
        await loop.run_in_executor(None, cast(Callable[[], str], self.api_key))
        await asyncio.to_thread(cast(Callable[[], str], load_prompt(data["path"])))  # ARL140: load_prompt, asyncio.to_thread(load_prompt, data["path"])
        return text, llm

    async def other(self):
        return None


async def shadowed(open, time):
    open("x")
    time.sleep(1)


async def local_import():
    import time as clock

    clock.sleep(1)  # ARL110


async def by_reference():
    await asyncio.to_thread(open, "x")
    await asyncio.to_thread(time.sleep, 1)
    callback = lambda: open("x")  # noqa: E731
    return callback
