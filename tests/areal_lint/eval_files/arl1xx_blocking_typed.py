"""Blocking calls the first tables missed: typed receivers, more APIs, agent frameworks."""

import asyncio
import codecs
import concurrent.futures
import getpass
import io
import json
import os
import queue
import socket
import sqlite3
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Optional, TextIO
from urllib.request import urlopen

import anthropic
import httpx
import httpx2
import litellm
import openai
import requests
import urllib3
import yaml
from agents import Agent, Runner
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openai import OpenAI


# ---- a client or file received as a parameter -------------------------------------------------
async def fetch(client: httpx.Client, url):
    return client.get(url)  # ARL120: httpx.Client().get


async def fetch_optional(client: Optional[requests.Session], url):
    return client.post(url)  # ARL120: requests.Session().post


async def fetch_union(client: "httpx2.Client | None", url):
    return client.get(url)  # ARL120: httpx2.Client().get


async def read_all(f: TextIO):
    head = f.readline()  # ARL104: f.readline
    return head + f.read()  # ARL104: f.read


async def write_bytes(sink: IO[bytes], blob):
    sink.write(blob)  # ARL104: sink.write
    sink.flush()  # ARL104: sink.flush


async def stat_a_path(root: Path):
    return root.resolve()  # ARL102: Path.resolve


async def ask(llm: BaseChatModel, messages):
    return llm.invoke(messages)  # ARL122: llm.invoke, await llm.ainvoke(...)


async def complete(client: anthropic.Anthropic, messages):
    return client.messages.create(model="m", messages=messages, max_tokens=8)  # ARL121: the anthropic.Anthropic client's messages.create(), use anthropic.AsyncAnthropic and await messages.create(...)


# ---- attributes set elsewhere ----------------------------------------------------------------
class Logger:
    def __init__(self, session: requests.Session, path):
        self.session = session
        self.log = open(path, "a")
        self.db = sqlite3.connect(path + ".db")

    async def connect(self):
        self.pool = urllib3.PoolManager()

    async def arun_episode(self, engine, data):
        self.session.post("http://x", json=data)  # ARL120: requests.Session().post
        self.log.write("episode\n")  # ARL104: self.log.write
        self.db.execute("INSERT INTO t VALUES (?)", (1,))  # ARL105: self.db.execute
        self.db.commit()  # ARL105: self.db.commit
        self.pool.request("GET", "http://x")  # ARL120: urllib3.PoolManager().request
        return await engine.agenerate(data)


@dataclass
class Fields:
    http: httpx.Client
    llm: ChatOpenAI

    async def run(self, data, **kwargs):
        self.http.get("http://x")  # ARL120: httpx.Client().get
        return self.llm.batch([data])  # ARL122: self.llm.batch, await self.llm.abatch(...)


# ---- APIs that were not in the tables --------------------------------------------------------
async def more_apis(path, url):
    urllib3.request("GET", url)  # ARL120: urllib3.request
    urlopen(url)  # ARL120: urllib.request.urlopen
    httpx2.post(url)  # ARL120: httpx2.post
    with httpx2.Client() as client:
        client.get(url)  # ARL120: httpx2.Client().get
    answer = input("go? ")  # ARL112: input
    secret = getpass.getpass()  # ARL112: getpass.getpass
    line = sys.stdin.readline()  # ARL112: sys.stdin.readline
    io.open_code(path)  # ARL101: io.open_code
    os.posix_spawn("ls", ["ls"], {})  # ARL111: os.posix_spawn
    os.posix_spawnp("ls", ["ls"], {})  # ARL111: os.posix_spawnp
    os.spawnlp(os.P_WAIT, "ls", "ls")  # ARL111: os.spawnlp
    os.path.islink(path)  # ARL102: os.path.islink
    os.path.realpath(path)  # ARL102: os.path.realpath
    os.path.samefile(path, path)  # ARL102: os.path.samefile
    os.path.getctime(path)  # ARL102: os.path.getctime
    os.path.lexists(path)  # ARL102: os.path.lexists
    os.path.join(path, "x")
    os.path.basename(path)
    conn = sqlite3.connect(path)  # ARL105: sqlite3.connect
    cur = conn.cursor()
    cur.execute("SELECT 1")  # a connection made here: one finding, at its connect
    rows = cur.fetchall()
    f = open(path)  # ARL101: open
    f.read()
    return answer, secret, line, rows


async def read_offloaded_open(path):
    import asyncio

    f = await asyncio.to_thread(open, path)
    return f.read()  # ARL104: f.read


async def thread_primitives(executor: concurrent.futures.ThreadPoolExecutor, work):
    fut = executor.submit(work)
    event = threading.Event()
    jobs = queue.Queue()
    event.wait()  # ARL131: threading.Event.wait, use asyncio.Event and await event.wait()
    jobs.get()  # ARL131: queue.Queue.get, use asyncio.Queue and await it
    return fut.result()  # ARL131: concurrent.futures.Future.result, await asyncio.wrap_future(fut)


# ---- agent frameworks and LLM SDKs -----------------------------------------------------------
class FrameworkAgent:
    def __init__(self):
        self.agent = Agent(name="a")
        self.chat = init_chat_model("openai:gpt-4o")

    async def run(self, data, **kwargs):
        result = Runner.run_sync(self.agent, data["prompt"])  # ARL122: Runner.run_sync, await Runner.run(agent, input)
        client = anthropic.Anthropic()  # ARL121: anthropic.Anthropic, use anthropic.AsyncAnthropic and await its calls
        reply = litellm.completion(model="m", messages=[])  # ARL121: litellm.completion, await litellm.acompletion(...)
        vec = litellm.embedding(model="m", input=["x"])  # ARL121: litellm.embedding, await litellm.aembedding(...)
        chat = ChatOpenAI(http_client=kwargs["http_client"])
        first = chat.invoke(data["messages"])  # ARL122: chat.invoke, await chat.ainvoke(...)
        for chunk in chat.stream(data["messages"]):  # ARL122: chat.stream, async for ... in chat.astream(...)
            print(chunk)
        more = self.chat.invoke("hi")  # ARL122: self.chat.invoke, await self.chat.ainvoke(...)
        graph = create_react_agent(chat, tools=[])
        state = graph.invoke({"messages": []})  # ARL122: graph.invoke, await graph.ainvoke(...)
        resp = OpenAI().responses.create(model="m", input="x")  # ARL121: openai.OpenAI, use openai.AsyncOpenAI and await its calls
        default = openai.chat.completions.create(model="m", messages=[])  # ARL121: openai.chat.completions.create, use openai.AsyncOpenAI and await its calls
        summary = self._summarize(data)
        return result, client, reply, vec, first, more, state, resp, default, summary

    def _summarize(self, data):
        return OpenAI().responses.create(model="m", input=data["text"])  # ARL121: the openai.OpenAI client's responses.create(), use openai.AsyncOpenAI and await responses.create(...)


# ---- any method of a typed blocking object (issue 22) ---------------------------------------
SHARED_HTTP = httpx.Client()
LOG_FILE = open("episodes.log", "a")
POOL: urllib3.PoolManager = urllib3.PoolManager()


async def every_method_of_a_sync_client(url):
    client = httpx.Client()
    client.send(client.build_request("GET", url))  # ARL120: httpx.Client().send
    client.close()  # ARL120: httpx.Client().close
    SHARED_HTTP.stream("GET", url)  # ARL120: httpx.Client().stream
    POOL.urlopen("GET", url)  # ARL120: urllib3.PoolManager().urlopen
    LOG_FILE.write(url)  # ARL104: LOG_FILE.write


async def annotated_pools(url, proxy: urllib3.ProxyManager, conn: Optional[httpx.Client]):
    pool: urllib3.HTTPSConnectionPool = make_pool()
    pool.request("GET", url)  # ARL120: urllib3.HTTPSConnectionPool().request
    proxy.request("GET", url)  # ARL120: urllib3.ProxyManager().request
    conn.send(conn.build_request("GET", url))  # ARL120: httpx.Client().send
    conn = rebuild()  # a declared type holds, as for a type checker
    conn.close()  # ARL120: httpx.Client().close


async def every_method_of_a_sync_file(path, f: TextIO, db: sqlite3.Connection):
    f.seek(0)  # ARL104: f.seek
    f.fileno()
    f.tell()
    db.cursor().execute("SELECT 1")  # ARL105: db.cursor(...).execute
    with open(path) as g:  # ARL101: open
        g.seek(0)
    g.close()  # closed by its with block: no I/O left (camel's toolkits do this)


async def a_file_opened_here_is_one_finding_at_its_open(path, record):
    with open(path, "a") as out:  # ARL101: open
        json.dump(record, out)
        out.write("\n")
    with io.open(path, "a") as out:  # ARL101: io.open
        out.write("\n")
    log = codecs.open(path, "a")  # ARL101: codecs.open
    log.write("x")
    with tempfile.NamedTemporaryFile() as tmp:  # ARL101: tempfile.NamedTemporaryFile
        tmp.write(b"x")
        tmp.flush()
    text = open(path).read()  # ARL101: open
    state = json.load(open(path))  # ARL101: open
    conn = sqlite3.connect(path)  # ARL105: sqlite3.connect
    conn.execute("SELECT 1")
    llm = OpenAI()  # ARL121: openai.OpenAI, use openai.AsyncOpenAI and await its calls
    reply = llm.chat.completions.create(model="m", messages=[])
    return text, state, reply


async def a_file_from_elsewhere_is_reported_at_each_use(sink: TextIO, record):
    json.dump(record, sink)  # ARL103: json.dump
    sink.write("\n")  # ARL104: sink.write


async def raw_socket(host):
    sock = socket.create_connection((host, 80))  # ARL131: socket.create_connection, await asyncio.open_connection(host, port)
    socket.getaddrinfo(host, 80)  # ARL131: socket.getaddrinfo, await asyncio.get_running_loop().getaddrinfo(host, port)
    socket.gethostbyaddr("127.0.0.1")  # ARL131: socket.gethostbyaddr, await asyncio.get_running_loop().getnameinfo(sockaddr)
    await asyncio.get_running_loop().getaddrinfo(host, 80)
    socket.inet_aton("127.0.0.1")  # arithmetic on an address: no network
    sock.settimeout(5)
    sock.sendall(b"ping")  # the connection made here is one finding, at its create_connection
    return sock.recv(4)


async def serve_one_client():
    server = socket.create_server(("127.0.0.1", 0))  # binding a port waits on nothing
    conn, _ = server.accept()  # ARL131: socket.create_server.accept, use asyncio.start_server, or await loop.sock_accept/sock_recv/sock_sendall
    return conn.recv(4)  # the connection accepted here is one finding, at its accept


async def socket_made_elsewhere(sock: socket.socket):
    sock.sendall(b"ping")  # ARL131: socket.socket.sendall, use asyncio.open_connection, or await loop.sock_recv/sock_sendall/sock_connect
    return sock.recv(4)  # ARL131: socket.socket.recv, use asyncio.open_connection, or await loop.sock_recv/sock_sendall/sock_connect


def sync_connect(host):
    return socket.create_connection((host, 80))  # a sync function: run it with asyncio.to_thread


async def os_path_touching_the_disk(path):
    os.path.relpath(path)  # ARL102: os.path.relpath
    return os.path.normpath(path)  # pure string work: nothing


async def yaml_from_a_stream_or_a_string(path: Path, stream: TextIO):
    config = yaml.safe_load(stream)  # ARL103: yaml.safe_load
    text_config = yaml.safe_load(path.read_text())  # ARL102: Path.read_text
    inline = yaml.safe_load("a: 1")
    return config, text_config, inline
