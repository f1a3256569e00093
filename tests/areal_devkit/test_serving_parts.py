# SPDX-License-Identifier: Apache-2.0
"""The parts of ``areal-devkit serve`` on their own: the log line's request summary, the error
text it shows, and the session file's atomic, skip-if-unchanged writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from areal_devkit.serving.request_log import describe_request
from areal_devkit.serving.session_file import SessionFile


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (  # chat completions with tools, streamed
            {"messages": [{"role": "user", "content": "hi " * 40}], "tools": [{}], "stream": True},
            ["msgs=1", "tools=1", "stream", 'user:"' + ("hi " * 15).strip() + ' ..."'],
        ),
        ({"input": "What is 2+3?"}, ['user:"What is 2+3?"']),  # Responses, a string input
        (  # Responses: the last item is a tool result
            {"input": [{"type": "function_call_output", "call_id": "c", "output": "5"}]},
            ["msgs=1", 'function_call_output:"5"'],
        ),
        (  # Messages: content blocks
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "2+2?"}]}]},
            ["msgs=1", 'user:"2+2?"'],
        ),
    ],
)
def test_request_summary_names_counts_and_the_last_message(body: dict, expected: list) -> None:
    assert describe_request(body) == expected


def test_request_summary_of_bodies_that_are_not_json_objects() -> None:
    assert describe_request(None) == []  # the proxy refused to parse it
    assert describe_request([1, 2]) == []


@pytest.mark.asyncio
async def test_session_file_writes_atomically_and_skips_an_unchanged_save(
    scripted_engine: Any, tiny_tokenizer: Any, tmp_path: Path
) -> None:
    from openai import AsyncOpenAI

    from areal_runtime.experimental.openai.proxy import AgentProxy

    path = tmp_path / "s.jsonl"
    async with AgentProxy(scripted_engine(["5"], cycle=True), tiny_tokenizer) as proxy:
        sessions = SessionFile(proxy.state, path)
        assert sessions.write() == 0 and path.read_text() == ""  # no completion yet
        async with proxy.session() as session:
            kw = session.extra_kwargs
            client = AsyncOpenAI(
                base_url=kw["base_url"], api_key=kw["api_key"], http_client=kw["http_client"]
            )
            reply = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "What is 2+3?"}]
            )
            assert sessions.write() == 1
            (line,) = path.read_text().splitlines()
            record = json.loads(line)
            assert record["completion_ids"] == [reply.id] and record["reward"] is None
            path.write_text(path.read_text() + "marker\n")
            assert sessions.write() == 1 and path.read_text().endswith("marker\n")  # unchanged
            session.set_rewards(1.0)
            sessions.write()
        assert json.loads(path.read_text())["reward"] == 1.0  # a reward is a change
        assert sessions.write() == 1  # the session ended and left the proxy: still in the file
    leftovers = [p.name for p in tmp_path.iterdir()]  # noqa: ARL102 (a test, not an episode)
    assert leftovers == ["s.jsonl"]  # no temporary file left behind
