# SPDX-License-Identifier: Apache-2.0
"""Record what real clients send: a tiny HTTP server that answers every model API with a canned
reply and writes each request (path, headers that matter, JSON body) to a folder.

The fixtures next to this file were captured with it, once, from the real clients::

    python tests/areal_runtime/experimental/openai/client_requests/record.py OUT_DIR --port 8765
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=sk-x claude -p "What is 2+3?"

It answers ``/v1/messages`` with a text message, ``/v1/responses`` with a text response and
``/v1/chat/completions`` with a text completion (streamed when asked), so a client finishes its
turn after one request.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = "5"


def _message(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_recorded",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "recorded"),
        "content": [{"type": "text", "text": ANSWER}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _message_events(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = {**_message(body), "content": [], "stop_reason": None}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": ANSWER},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _response(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_recorded",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", "recorded"),
        "output": [
            {
                "type": "message",
                "id": "msg_recorded",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _response_events(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    done = _response(body)
    start = {**done, "status": "in_progress", "output": []}
    return [
        ("response.created", {"type": "response.created", "response": start, "sequence_number": 0}),
        (
            "response.completed",
            {"type": "response.completed", "response": done, "sequence_number": 1},
        ),
    ]


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-recorded",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "recorded"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": ANSWER},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _completion_chunks(body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    base = {k: v for k, v in _completion(body).items() if k not in ("choices", "usage")}
    base["object"] = "chat.completion.chunk"
    delta = {"role": "assistant", "content": ANSWER}
    return [
        (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]


class Recorder(BaseHTTPRequestHandler):
    out_dir: Path
    counter = iter(range(10**9))
    lock = threading.Lock()

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": "not recorded", "type": "not_found_error"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        path = self.path.split("?")[0]
        with self.lock:
            n = next(self.counter)
        record = {
            "path": path,
            "headers": {
                k.lower(): v
                for k, v in self.headers.items()
                if k.lower().startswith(("anthropic-", "openai-", "x-stainless-lang", "user-agent"))
            },
            "body": body,
        }
        (self.out_dir / f"{n:03d}.json").write_text(json.dumps(record, indent=1))
        stream = bool(body.get("stream"))
        if path.endswith("/messages"):
            return (
                self._send_sse(_message_events(body))
                if stream
                else self._send_json(200, _message(body))
            )
        if path.endswith("/responses"):
            return (
                self._send_sse(_response_events(body))
                if stream
                else self._send_json(200, _response(body))
            )
        if path.endswith("/chat/completions"):
            if stream:
                return self._send_sse(_completion_chunks(body), done=True)
            return self._send_json(200, _completion(body))
        self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found_error"}})

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_sse(self, events: list[tuple[str | None, Any]], done: bool = False) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def serve(out_dir: Path, port: int = 0) -> ThreadingHTTPServer:
    """A started recorder (in a daemon thread) writing to ``out_dir``; ``.server_port`` is its port."""
    out_dir.mkdir(parents=True, exist_ok=True)
    handler = type(
        "BoundRecorder", (Recorder,), {"out_dir": out_dir, "counter": iter(range(10**9))}
    )
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = serve(args.out_dir, args.port)
    print(f"recording to {args.out_dir} on http://127.0.0.1:{server.server_port}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
