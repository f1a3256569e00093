# SPDX-License-Identifier: Apache-2.0
"""Eval files in the flake8-async style: the comments are the expected findings."""

import re
import subprocess
import sys

import libcst as cst
import pytest

from areal_lint.rules import ALL_RULES
from areal_lint.runner import lint_source

from .harness import eval_files, expected, flake8_args, options_for

FILES = eval_files()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_findings_match_the_comments_exactly(path):
    source = path.read_text()
    got = {(f.line, f.code) for f in lint_source(source, str(path), options_for(source))}
    want = expected(source)
    assert not want - got, f"missing findings: {sorted(want - got)}"
    assert not got - want, f"unexpected findings: {sorted(got - want)}"


def run_flake8(path, extra=()):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--select=ARL",
            "--format=%(row)d:%(code)s",
            *extra,
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {(int(r), c) for r, c in (line.split(":") for line in proc.stdout.split())}


@pytest.mark.parametrize(
    "path", [p for p in FILES if expected(p.read_text())], ids=lambda p: p.name
)
def test_flake8_plugin_reports_the_same_and_honours_noqa(path, tmp_path):
    source = path.read_text()
    assert run_flake8(path, flake8_args(source)) == expected(source)
    silenced = []
    for line in source.splitlines():
        match = re.search(r"#\s*((?:ARL\d{3})(?:\s*,\s*ARL\d{3})*)\s*$", line)
        silenced.append(line[: match.start()] + f"# noqa: {match.group(1)}" if match else line)
    copy = tmp_path / path.name
    copy.write_text("\n".join(silenced) + "\n")
    assert run_flake8(copy, flake8_args(source)) == set()


def to_sync(source: str) -> str:
    source = re.sub(r"\basync (def|with|for)\b", r"\1", source)
    return re.sub(r"\bawait ", "", source)


@pytest.mark.parametrize(
    "path", [p for p in FILES if re.match(r"arl[123]", p.name)], ids=lambda p: p.name
)
def test_the_same_code_made_sync_is_silent(path):
    source = to_sync(path.read_text())
    findings = [f for f in lint_source(source, str(path), options_for(source)) if f.code < "ARL4"]
    assert findings == []


def test_every_rule_is_documented_tested_and_has_a_one_line_message():
    covered = {code for p in FILES for _, code in expected(p.read_text())}
    for rule in ALL_RULES:
        doc = rule.__doc__ or ""
        for section in ("What:", "Why:", "Example:", "Fix:"):
            assert section in doc, f"{rule.code} docstring lacks {section}"
        assert rule.code in covered, f"{rule.code} has no eval-file case"
        assert "\n" not in rule.message
        assert rule.code in MESSAGES, f"{rule.code} has no message snapshot"


MESSAGES = {
    "ARL101": (
        "arl1xx_blocking.py",
        20,
        "open() blocks the event loop; use aiofiles.open or await asyncio.to_thread(...)",
    ),
    "ARL102": (
        "arl1xx_blocking.py",
        42,
        "os.makedirs() touches the filesystem on the event loop; await asyncio.to_thread(...) or do it in __init__",
    ),
    "ARL103": (
        "arl1xx_blocking.py",
        46,
        "torch.load() reads or writes a file on the event loop; await asyncio.to_thread(torch.load, ...)",
    ),
    "ARL110": (
        "arl1xx_blocking.py",
        36,
        "time.sleep() blocks the event loop; use await asyncio.sleep(...)",
    ),
    "ARL111": (
        "arl1xx_blocking.py",
        39,
        "subprocess.run() runs a process synchronously; use await asyncio.create_subprocess_exec(...)",
    ),
    "ARL120": (
        "arl1xx_blocking.py",
        50,
        "requests.get() is a synchronous HTTP call; use the shared async client: await workflow_context.get_httpx_client()",
    ),
    "ARL121": (
        "arl1xx_blocking.py",
        55,
        "openai.OpenAI is a synchronous LLM client; use AsyncOpenAI/AsyncAnthropic and await it",
    ),
    "ARL130": (
        "arl1xx_blocking.py",
        56,
        "engine.generate() blocks inside an episode; episodes only await engine.agenerate(...)",
    ),
    "ARL131": (
        "arl1xx_blocking.py",
        58,
        "asyncio.run() blocks or re-enters the running event loop; await the coroutine instead",
    ),
    "ARL140": (
        "arl1xx_blocking.py",
        59,
        'load_prompt() is called before it is offloaded; pass the function and its arguments: asyncio.to_thread(load_prompt, data["path"])',
    ),
    "ARL190": (
        "arl190_configured.py",
        6,
        "mylib.fetch_page() is configured as blocking; use mylib.afetch",
    ),
    "ARL201": (
        "arl2xx_coroutines.py",
        19,
        "self.helper() returns a coroutine that is never awaited; add await",
    ),
    "ARL202": (
        "arl2xx_coroutines.py",
        24,
        "pending holds a coroutine that is never awaited or used; await it",
    ),
    "ARL203": ("arl2xx_coroutines.py", 23, "resp is a coroutine used as a value; await it first"),
    "ARL204": (
        "arl2xx_coroutines.py",
        28,
        "the task from asyncio.create_task() is not referenced and may be garbage-collected; keep a reference or use a TaskGroup",
    ),
    "ARL205": (
        "arl2xx_coroutines.py",
        36,
        "self.helper is an async def; offloading it to a thread only creates a coroutine: await it directly",
    ),
    "ARL301": (
        "arl3xx_per_episode.py",
        23,
        "httpx.AsyncClient() creates a connection pool per episode; reuse await workflow_context.get_httpx_client()",
    ),
    "ARL302": (
        "arl3xx_per_episode.py",
        47,
        "aiohttp.ClientSession() creates a connection pool per call; reuse a shared client (workflow_context)",
    ),
    "ARL303": (
        "arl3xx_per_episode.py",
        29,
        "AsyncRewardWrapper is built per episode; build it once in __init__",
    ),
    "ARL304": (
        "arl3xx_per_episode.py",
        26,
        "AsyncOpenAI() without http_client= builds a private connection pool per episode; pass http_client=extra_kwargs['http_client']",
    ),
    "ARL305": (
        "arl3xx_per_episode.py",
        28,
        "http_client=...get('http_client') falls back to a private pool when none is passed; index it or give a shared default",
    ),
    "ARL306": (
        "arl3xx_per_episode.py",
        60,
        "async with AsyncOpenAI(http_client=<shared>) closes the shared client on exit; assign the client instead of using async with",
    ),
    "ARL310": (
        "arl3xx_per_episode.py",
        32,
        "transformers.AutoTokenizer.from_pretrained() is heavy set-up run per episode; do it once in __init__ or behind a lazy guard",
    ),
    "ARL311": (
        "arl3xx_per_episode.py",
        36,
        "ThreadPoolExecutor() creates a pool per call and its shutdown blocks the loop; create it once",
    ),
    "ARL401": (
        "arl4xx_rewards.py",
        26,
        "reward function compute_score() runs on the event loop with no timeout; wrap it in AsyncRewardWrapper (built in __init__) and await it",
    ),
    "ARL402": (
        "arl2xx_coroutines.py",
        37,
        "self.reward() is an AsyncRewardWrapper call that is never awaited; add await",
    ),
    "ARL403": (
        "arl4xx_rewards.py",
        18,
        "a lambda cannot be pickled for AsyncRewardWrapper's process pool; define it at module level",
    ),
    "ARL404": (
        "arl4xx_rewards.py",
        20,
        "self.judge is an async def; AsyncRewardWrapper needs a synchronous function (await async rewards directly)",
    ),
    "ARL901": (
        "arl9xx_optin.py",
        8,
        "apply_chat_template() is CPU-heavy on the event loop; consider await asyncio.to_thread(...)",
    ),
    "ARL902": (
        "arl9xx_optin.py",
        9,
        "self.last is set inside an episode; concurrent episodes share it, keep it local",
    ),
}


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_rendered_message_text(code):
    name, line, message = MESSAGES[code]
    path = FILES[0].parent / name
    source = path.read_text()
    found = [
        f
        for f in lint_source(source, str(path), options_for(source))
        if f.code == code and f.line == line
    ]
    assert found, f"no {code} on {name}:{line}"
    assert found[0].message == message


def test_syntax_error_is_one_arl000_finding():
    findings = lint_source("async def f(:\n    pass\n", "bad.py")
    assert [f.code for f in findings] == ["ARL000"]
    assert "could not parse bad.py" in findings[0].message and findings[0].line == 2


def test_files_without_async_are_not_parsed(monkeypatch):
    monkeypatch.setattr(cst, "parse_module", lambda *a: pytest.fail("parsed a file with no async"))
    assert lint_source("import time\ntime.sleep(1)\n") == []


def test_flake8_config_extend_ignore_per_file_ignores_and_arl_options(tmp_path):
    source = (
        "import time\n\nimport mylib\n\n\n"
        "async def step():\n"
        "    time.sleep(1)\n"
        "    open('x')\n"
        "    mylib.fetch()\n"
    )
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(source)
    (tmp_path / ".flake8").write_text(
        "[flake8]\n"
        "extend-ignore = ARL101\n"
        "per-file-ignores =\n    b.py: ARL110\n"
        "arl-blocking-calls = mylib.fetch->mylib.afetch\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=ARL", "--format=%(path)s:%(row)d:%(code)s %(text)s"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [
        "./a.py:7:ARL110 time.sleep() blocks the event loop; use await asyncio.sleep(...)",
        "./a.py:9:ARL190 mylib.fetch() is configured as blocking; use mylib.afetch",
        "./b.py:9:ARL190 mylib.fetch() is configured as blocking; use mylib.afetch",
    ]
