# SPDX-License-Identifier: Apache-2.0
"""Qwen-style ``<tool_call>{json}</tool_call>`` blocks: parse them out of a reply, never drop one.

A block that is not a JSON object with a ``name`` stays in the reply text and is reported as
malformed, so the episode's report says a tool call could not be parsed instead of the call
silently disappearing.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


@dataclass
class ParsedReply:
    """The reply split into text and tool calls (chat-completions format)."""

    content: str | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


def parse_tool_calls(text: str) -> ParsedReply:
    """Valid blocks become calls and leave the text; malformed ones stay in it and are listed."""
    calls: list[dict[str, Any]] = []
    malformed: list[str] = []

    def take(match: re.Match[str]) -> str:
        raw = match.group(1)
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            malformed.append(f"{raw[:80]!r}: not valid JSON ({exc.msg})")
            return match.group(0)
        if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str):
            malformed.append(f"{raw[:80]!r}: needs an object with a string 'name'")
            return match.group(0)
        args = parsed.get("arguments", {})
        calls.append(
            {
                "id": new_call_id(),
                "type": "function",
                "function": {
                    "name": parsed["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
        return ""

    rest = TOOL_CALL.sub(take, text)
    if not calls:
        return ParsedReply(text, [], malformed)
    return ParsedReply(rest.strip() or None, calls, malformed)
