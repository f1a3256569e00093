# SPDX-License-Identifier: Apache-2.0
"""``areal-devkit serve`` as a person uses it: a real subprocess on the embedded model, driven by
the real openai and anthropic SDKs; its request log, its trajectory file and its shutdown."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
BANNER_END = "one line per request follows"


@dataclass
class Served:
    proc: subprocess.Popen
    output: Path
    openai_url: str
    anthropic_url: str
    api_key: str
    admin_key: str
    lines: list[str] = field(default_factory=list)

    def read_until(self, predicate: Any, timeout: float = 60) -> list[str]:
        """Read stdout lines until ``predicate(line)``; all lines read so far."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("serve exited early:\n" + "".join(self.lines))
            self.lines.append(line)
            if predicate(line):
                return self.lines
        raise AssertionError("timed out; output so far:\n" + "".join(self.lines))

    def stop(self, sig: int = signal.SIGTERM) -> str:
        self.proc.send_signal(sig)
        rest, _ = self.proc.communicate(timeout=60)
        self.lines.append(rest)
        return "".join(self.lines)


def start(tmp_path: Path, *extra: str) -> Served:
    output = tmp_path / "sessions.jsonl"
    cmd = [sys.executable, "-m", "areal_devkit", "serve", "--port", "0"]
    cmd += ["--output", str(output), *extra]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    served = Served(proc, output, "", "", "", "")
    try:
        banner = "".join(served.read_until(lambda line: BANNER_END in line))
    except BaseException:
        proc.kill()
        proc.communicate()
        raise

    def value(label: str) -> str:
        return banner.split(label, 1)[1].split()[0]

    served.openai_url = value("OpenAI base URL")
    served.anthropic_url = value("Anthropic base URL")
    served.api_key = value("API key")
    served.admin_key = value("admin key")
    return served


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = start(tmp_path, "--save-every", "0.5", "--log-requests", str(tmp_path / "req.jsonl"))
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.communicate()


def log_line(served: Served, path: str) -> str:
    return served.read_until(lambda line: f" {path} " in line)[-1]


def sessions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_agents_reach_it_with_the_printed_urls_and_key_and_each_request_is_logged(
    served: Served,
) -> None:
    import anthropic
    import openai

    assert served.openai_url.endswith("/v1") and served.openai_url.startswith("http://127.0.0.1:")
    client = openai.OpenAI(base_url=served.openai_url, api_key=served.api_key, max_retries=0)
    chat = client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What is 2+3?"}], max_tokens=8
    )
    line = log_line(served, "/v1/chat/completions")
    usage = chat.usage
    assert " 200 " in line and "serve-0" in line and 'user:"What is 2+3?"' in line
    assert f"-> {usage.prompt_tokens}+{usage.completion_tokens} tok" in line

    streamed = client.responses.create(model="any", input="What is 4+4?", stream=True)
    assert any(event.type == "response.completed" for event in streamed)
    assert "stream" in log_line(served, "/v1/responses")

    claude = anthropic.Anthropic(
        base_url=served.anthropic_url, api_key=served.api_key, max_retries=0
    )
    message = claude.messages.create(
        model="any", max_tokens=8, messages=[{"role": "user", "content": "What is 1+1?"}]
    )
    assert message.content[0].type == "text"
    assert 'user:"What is 1+1?"' in log_line(served, "/v1/messages")

    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="any", messages=[{"role": "user", "content": "hi"}], top_logprobs=2
        )
    refused = log_line(served, "/v1/chat/completions")
    assert " 400 " in refused and "error: top_logprobs" in refused

    from langchain_openai import ChatOpenAI

    langchain_app = ChatOpenAI(
        model="any", base_url=served.openai_url, api_key=served.api_key, max_tokens=8
    )
    assert isinstance(langchain_app.invoke("What is 3+3?").content, str)
    assert 'user:"What is 3+3?"' in log_line(served, "/v1/chat/completions")

    stranger = openai.OpenAI(base_url=served.openai_url, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        stranger.chat.completions.create(model="any", messages=[{"role": "user", "content": "x"}])
    denied = log_line(served, "/v1/chat/completions")
    assert " 401 " in denied and " - " in denied and "invalid API key" in denied

    # --log-requests: every request whole, with its status and the error the agent got
    records = [json.loads(line) for line in (served.output.parent / "req.jsonl").open()]
    assert [r["path"] for r in records] == [
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
    ]
    assert records[0]["request"]["messages"] == [{"role": "user", "content": "What is 2+3?"}]
    assert records[0]["status"] == 200 and records[0]["error"] is None
    assert records[0]["session"] == "serve-0"
    assert records[3]["request"]["top_logprobs"] == 2 and "top_logprobs" in records[3]["error"]
    assert records[5]["status"] == 401 and records[5]["session"] is None


@pytest.mark.slow
def test_sessions_are_written_periodically_and_on_sigterm_and_view_reads_them(
    served: Served, tmp_path: Path
) -> None:
    import openai

    client = openai.OpenAI(base_url=served.openai_url, api_key=served.api_key, max_retries=0)
    reply = client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What is 2+3?"}], max_tokens=8
    )
    # A second session through AReaL's online-mode routes, with a reward.
    base = served.anthropic_url
    admin = {"Authorization": f"Bearer {served.admin_key}"}
    started = httpx.post(f"{base}/rl/start_session", headers=admin, json={}).json()
    second = openai.OpenAI(base_url=served.openai_url, api_key=started["api_key"], max_retries=0)
    second.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What is 4+4?"}], max_tokens=8
    )
    own = {"Authorization": f"Bearer {started['api_key']}"}
    assert httpx.post(f"{base}/rl/set_reward", headers=own, json={"reward": 0.5}).status_code == 200

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the periodic save, while the server runs
        if served.output.exists() and len(sessions(served.output)) == 2:
            break
        time.sleep(0.2)
    assert [s["session_id"] for s in sessions(served.output)] == ["serve-0", started["session_id"]]
    assert served.proc.poll() is None

    out = served.stop(signal.SIGTERM)
    assert served.proc.returncode == 0, out
    assert f"wrote 2 session(s) to {served.output}" in out
    first, other = sessions(served.output)
    assert first["completion_ids"] == [reply.id] and first["reward"] is None
    assert other["reward"] == 0.5 and other["rewards"] == [0.5]
    assert sum(first["loss_mask"][0]) == reply.usage.completion_tokens
    assert not list(tmp_path.glob(".sessions.jsonl.*"))  # no temporary file left behind

    page = tmp_path / "page.html"
    view = subprocess.run(
        [sys.executable, "-m", "areal_devkit", "view", str(served.output), "-o", str(page)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert view.returncode == 0 and "(2 episodes)" in view.stdout, view.stdout + view.stderr


@pytest.mark.slow
def test_a_closed_terminal_sighup_writes_the_file_too(served: Served) -> None:
    import openai

    client = openai.OpenAI(base_url=served.openai_url, api_key=served.api_key, max_retries=0)
    client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What is 2+3?"}], max_tokens=8
    )
    out = served.stop(signal.SIGHUP)
    assert served.proc.returncode == 0, out
    assert len(sessions(served.output)) == 1


@pytest.mark.slow
def test_ctrl_c_writes_the_file_even_with_periodic_saving_off_on_an_hf_model(
    tmp_path: Path,
) -> None:
    import openai

    from areal_runtime.models.default_model import save_default_model

    model = save_default_model(tmp_path / "model")
    served = start(tmp_path, "--save-every", "0", "--engine", f"hf:{model}")
    assert f"--tokenizer hf:{model}" in "".join(served.lines)  # how to view it, decoded
    client = openai.OpenAI(base_url=served.openai_url, api_key=served.api_key, max_retries=0)
    client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What is 2+3?"}], max_tokens=8
    )
    log_line(served, "/v1/chat/completions")
    assert not served.output.exists()
    out = served.stop(signal.SIGINT)
    assert served.proc.returncode == 0, out
    assert len(sessions(served.output)) == 1
    assert f"view them: areal-devkit view {served.output} --tokenizer hf:{model}" in out
    assert re.search(r"prefix cache: 0% of \d+ prompt tokens reused", out)  # one request


def test_a_taken_port_is_a_usage_error_naming_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cmd = [sys.executable, "-m", "areal_devkit", "serve", "--port", str(port)]
        cmd += ["--output", str(tmp_path / "s.jsonl")]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "--port" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output", "s.pt"], "--output must end in .jsonl"),
        (["--output", "missing/s.jsonl"], "does not exist"),
        (["--port", "70000"], "--port must be in 0..65535"),
        (["--save-every", "-1"], "--save-every must be >= 0"),
        (["--engine", "scripted"], "serve a model instead"),
        (["--engine", "sglang:nohost"], "is not HOST:PORT"),
        (["--engine", "sglang:127.0.0.1:1"], "pass --tokenizer hf:PATH"),
        (["--engine", "sglang:127.0.0.1:1", "--tokenizer", "x"], "--tokenizer must be hf:PATH"),
        (["--engine", "vllm:127.0.0.1:1", "--seed", "3"], "samples with its own seed"),
    ],
)
def test_bad_options_are_usage_errors_that_name_the_problem(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from areal_devkit.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["serve", *args]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.asyncio
@pytest.mark.slow
async def test_serves_an_sglang_server_with_the_models_tokenizer(
    local_engine: Any, tmp_path: Path
) -> None:
    """``--engine sglang:HOST:PORT --tokenizer hf:PATH``, against the SGLang-compatible server
    of the embedded model; greedy answers equal the model's own."""
    import asyncio

    import openai

    from areal_runtime.models.default_model import save_default_model

    model = save_default_model(tmp_path / "model")
    sglang = await local_engine.serve_sglang()
    try:
        served = await asyncio.to_thread(
            start,
            tmp_path,
            *("--engine", f"sglang:{sglang.address}", "--tokenizer", f"hf:{model}"),
        )
        try:
            client = openai.AsyncOpenAI(
                base_url=served.openai_url, api_key=served.api_key, max_retries=0
            )
            reply = await client.chat.completions.create(
                model="any",
                messages=[{"role": "user", "content": "What is 2+3?"}],
                max_tokens=8,
                temperature=0,
            )
            await client.close()
            assert reply.choices[0].message.content == "5"  # the embedded model's greedy answer
            out = await asyncio.to_thread(served.stop, signal.SIGTERM)
            assert served.proc.returncode == 0, out
            assert f"on sglang:{sglang.address}" in out
            assert len(sessions(served.output)) == 1
        finally:
            if served.proc.poll() is None:
                served.proc.kill()
                await asyncio.to_thread(served.proc.communicate)
    finally:
        await sglang.close()


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_listening_on_every_interface_warns_and_prints_urls_that_work(tmp_path: Path) -> None:
    server = start(tmp_path, "--host", "0.0.0.0")
    try:
        banner = "".join(server.lines)
        assert "WARNING: listening on every network interface" in banner
        assert "Use --host 127.0.0.1" in banner and "0.0.0.0" not in server.openai_url
        assert server.openai_url.startswith("http://127.0.0.1:")  # an address a client can use
        health = httpx.get(server.anthropic_url + "/health", timeout=10)
        assert health.status_code == 200
    finally:
        server.stop()


@pytest.mark.parametrize(("args", "engine_kwargs"), [([], {}), (["--seed", "7"], {"seed": 7})])
def test_seed_reaches_the_local_engine(
    args: list[str],
    engine_kwargs: dict[str, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without --seed a fresh serve samples as every fresh serve does (the engine's seed 0):
    the same question gets the same reply. --seed draws another sample path."""
    from areal_devkit import runtime_facade
    from areal_devkit.cli import main

    seen: list[tuple[str, dict[str, int]]] = []

    def engine_from_spec(spec: str, **kwargs: int) -> None:
        seen.append((spec, kwargs))
        raise ValueError("stop before the model loads")

    monkeypatch.setattr(runtime_facade, "engine_from_spec", engine_from_spec)
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--port", "0", *args]) == 2
    assert seen == [("local", engine_kwargs)]
