# SPDX-License-Identifier: Apache-2.0
"""Hostile input for the SGLang-compatible server (``/generate``, ``/health``).

The app is driven in-process over ASGI (as the proxy's fuzz suite drives the proxy); the
chunked 413 runs on the real server (uvicorn on a loopback socket). Whatever arrives, it
answers 200, 400 or 413 with a JSON error that names the field, logs no traceback, and keeps
serving.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from areal_runtime.engine.local.server import ServerLimits, create_app, serve
from areal_runtime.engine.scripted import ScriptedEngine
from areal_runtime.models.tokenizers import tiny_tokenizer

from .harness import assert_answer, assert_no_tracebacks, watched
from .strategies import JSON, Mutation, encode, examples, near_valid

TOK = tiny_tokenizer()
VOCAB = len(TOK)
VALID = {"input_ids": [1, 2, 3], "sampling_params": {"max_new_tokens": 4}}
# Small limits, so that generated bodies reach them without megabytes per example.
SMALL = ServerLimits(
    max_body_bytes=64 * 1024, max_input_ids=2048, max_new_tokens=64, max_stop=4, max_stop_chars=16
)

Request = tuple[str, str, bytes | None, dict[str, str]]


def scripted() -> ScriptedEngine:
    return ScriptedEngine(["hello"], tokenizer=TOK, cycle=True)


async def _send(
    engine: Any, requests: list[Request], limits: ServerLimits
) -> list[tuple[int, str]]:
    answers = []
    transport = httpx.ASGITransport(app=create_app(engine, limits=limits))
    async with httpx.AsyncClient(transport=transport, base_url="http://server") as client:
        for method, path, data, headers in requests:
            resp = await client.request(method, path, content=data, headers=headers)
            answers.append((resp.status_code, resp.text))
        # Every request is answered and the server still serves a plain one.
        resp = await client.post("/generate", json=VALID)
        answers.append((resp.status_code, resp.text))
    return answers


def send(
    requests: list[Request], engine: Any = None, limits: ServerLimits = SMALL
) -> list[tuple[int, str]]:
    """Send ``requests`` then one valid request; fail on any traceback in logs or stderr."""
    with watched() as watch:
        answers = asyncio.run(_send(engine or scripted(), requests, limits))
    assert_no_tracebacks(watch)
    status, text = answers[-1]
    assert status == 200, f"the server stopped serving after hostile input: {status} {text}"
    return answers[:-1]


def post(body: bytes, **headers: str) -> Request:
    return ("POST", "/generate", body, {"content-type": "application/json", **headers})


def refusal(body: bytes, status: int = 400, **kwargs: Any) -> dict[str, Any]:
    ((got, text),) = send([post(body)], **kwargs)
    assert got == status, text
    return json.loads(text)


# --- regression tests: each finding of the fuzz suite, as a plain example ---------------------


@pytest.mark.parametrize("body", [b"[1, 2, 3]", b"null", b'"x"', b"3", b"true"])
def test_a_body_that_is_not_an_object_is_a_400(body: bytes) -> None:
    """Found: a JSON array body was an HTTP 500 ('list' object has no attribute 'get')."""
    answer = refusal(body)
    assert answer["field"] == "body" and "JSON object" in answer["error"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max_new_tokens": float("inf")}, "sampling_params.max_new_tokens"),  # was 500
        ({"top_k": float("inf")}, "sampling_params.top_k"),  # was 500
        ({"stop": 5}, "sampling_params.stop"),  # was 500
        ({"temperature": float("nan")}, "sampling_params.temperature"),  # was accepted
        ({"top_p": float("nan")}, "sampling_params.top_p"),  # was accepted
        ({"temperature": None}, "sampling_params.temperature"),  # was a 400 naming nothing
        ({"stop_token_ids": 3}, "sampling_params.stop_token_ids"),
        ({"ignore_eos": "no"}, "sampling_params.ignore_eos"),  # bool("no") was True
        ({"max_new_tokens": 10**12}, "sampling_params.max_new_tokens"),  # over the cap
        ({"min_new_tokens": 9}, "sampling_params.min_new_tokens"),  # above max_new_tokens
        ({"stop": ["x" * 17]}, "sampling_params.stop[0]"),
        ({"stop": ["a"] * 5}, "sampling_params.stop"),
        ({"typo": 1}, "sampling_params.typo"),
    ],
)
def test_bad_sampling_params_are_a_400_naming_the_field(params: dict, field: str) -> None:
    body = encode({"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 4, **params}})
    answer = refusal(body)
    assert answer["field"] == field and field in answer["error"]


def test_sampling_params_that_is_a_list_is_a_400() -> None:
    """Found: ``"sampling_params": []`` was served with the defaults."""
    assert refusal(encode({"input_ids": [1], "sampling_params": []}))["field"] == "sampling_params"


@pytest.mark.parametrize("token", [1.5, True, "1", -1, 2**40, None])
def test_input_ids_must_be_token_ids(token: Any) -> None:
    """Found: 1.5, true and "1" were silently turned into token 1 by int()."""
    assert refusal(encode({"input_ids": [2, token]}))["field"] == "input_ids[1]"


def test_input_ids_outside_the_vocabulary_name_input_ids() -> None:
    assert refusal(encode({"input_ids": [VOCAB + 5]}))["field"] == "input_ids"


def test_too_many_input_ids_is_a_400() -> None:
    answer = refusal(encode({"input_ids": [1] * (SMALL.max_input_ids + 1)}))
    assert answer["field"] == "input_ids" and str(SMALL.max_input_ids) in answer["error"]


def test_an_oversized_body_is_a_413() -> None:
    body = encode({"input_ids": [1], "rid": "x" * SMALL.max_body_bytes})
    assert refusal(body, status=413)["field"] == "body"


def test_an_oversized_chunked_body_is_a_413() -> None:
    """No content-length: the cap holds while reading, not only on the header."""

    def chunks() -> Iterator[bytes]:
        yield b'{"input_ids": [1], "rid": "'
        for _ in range(SMALL.max_body_bytes // 4096 + 1):
            yield b"x" * 4096
        yield b'"}'

    async def run() -> int:
        async def gen() -> Any:
            for c in chunks():
                yield c

        server = await serve(scripted(), limits=SMALL)
        try:
            async with (
                aiohttp.ClientSession(base_url=server.base_url) as client,  # noqa: ARL302 - one request
                client.post("/generate", data=gen()) as resp,
            ):
                return resp.status
        finally:
            await server.close()

    with watched() as watch:
        assert asyncio.run(run()) == 413
    assert_no_tracebacks(watch)


def test_the_default_limits_allow_a_real_request() -> None:
    """RemoteEngine's own body passes the default limits unchanged."""
    from areal_runtime.api.cli_args import GenerationHyperparameters
    from areal_runtime.engine.remote.backends import SGLangBackend

    g = GenerationHyperparameters(max_new_tokens=8, stop=["\n\n"], stop_token_ids=[0])
    body = SGLangBackend().build([1, 2, 3], g, 8)
    ((status, text),) = send([post(encode(body))], limits=ServerLimits())
    assert status == 200, text


def test_deeply_nested_json_is_a_400() -> None:
    assert refusal(b"[" * 30_000 + b"]" * 30_000)["field"] == "body"


@pytest.mark.parametrize("body", [b"", b"{", b"\xff\xfe{}", b"{'a': 1}"])
def test_bytes_that_are_not_json_are_a_400(body: bytes) -> None:
    assert refusal(body)["field"] == "body"


# --- properties -------------------------------------------------------------------------------

sampling = st.fixed_dictionaries(
    {},
    optional={
        "max_new_tokens": st.integers(1, SMALL.max_new_tokens),
        "temperature": st.floats(0, 2),
        "top_p": st.floats(0.01, 1),
        "top_k": st.one_of(st.just(-1), st.integers(1, 50)),
        "stop_token_ids": st.lists(st.integers(0, VOCAB - 1), max_size=3),
        "ignore_eos": st.booleans(),
        "skip_special_tokens": st.booleans(),
        "stop": st.lists(st.text(min_size=1, max_size=8), max_size=3),
        "frequency_penalty": st.floats(-2, 2),
    },
).map(lambda p: {**p, "min_new_tokens": 0})
valid_bodies = st.fixed_dictionaries(
    {"input_ids": st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=20)},
    optional={
        "sampling_params": sampling,
        "return_logprob": st.booleans(),
        "stream": st.just(False),
    },
)


@settings(max_examples=examples(25))
@given(valid_bodies)
def test_valid_bodies_are_served(body: dict[str, Any]) -> None:
    ((status, text),) = send([post(encode(body))])
    assert status == 200, text
    meta = json.loads(text)["meta_info"]
    assert len(meta["output_token_logprobs"]) == meta["completion_tokens"]


@settings(max_examples=examples(120))
@given(near_valid(valid_bodies))
def test_near_valid_bodies_are_served_or_refused_by_field(mutation: Mutation) -> None:
    ((status, text),) = send([post(encode(mutation.body))])
    assert_answer(status, text, mutation.names or {"body"})


@settings(max_examples=examples(40))
@given(st.one_of(JSON.map(encode), st.binary(max_size=200)))
def test_arbitrary_bytes_never_break_the_server(body: bytes) -> None:
    ((status, text),) = send([post(body)])
    assert_answer(status, text)


@settings(max_examples=examples(15))
@given(
    st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    st.sampled_from(["/generate", "/health", "/", "/generate/x", "/%00"]),
    st.binary(max_size=64),
)
def test_any_method_and_path_is_a_4xx_at_worst(method: str, path: str, body: bytes) -> None:
    ((status, text),) = send([(method, path, body, {})])
    assert status < 500, text


@pytest.mark.slow
@settings(max_examples=examples(30))
@given(
    st.lists(st.one_of(valid_bodies, near_valid(valid_bodies).map(lambda m: m.body)), max_size=4)
)
def test_a_real_engine_finishes_every_request(local_engine: Any, bodies: list[Any]) -> None:
    """With LocalEngine behind it, every request is answered and none stays in the engine."""
    answers = send([post(encode(b)) for b in bodies], engine=local_engine)
    for status, text in answers:
        assert_answer(status, text)
    assert local_engine._waiting == [] and local_engine._incoming.empty()


@pytest.fixture(scope="module")
def local_engine() -> Iterator[Any]:
    from areal_runtime.engine.local import LocalEngine

    engine = LocalEngine.default()
    yield engine
    engine.close()
