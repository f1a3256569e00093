# SPDX-License-Identifier: Apache-2.0
"""The one set of limits a request to either HTTP front of an engine is checked against.

The agent proxy (``experimental/openai/proxy/limits.py``) and the SGLang-compatible server
(``engine/local/server.py``) refuse what is past these before the engine sees the request, so
a hostile body can neither crash a handler nor tie the engine up for hours. One type, so a
completion length the proxy accepts is one the server accepts too when a ``RemoteEngine``
forwards it (the budget itself is ``engine._contract.token_budget``'s). ``docs/runtime.md``
("Limits") lists which fields each front checks.
"""

from __future__ import annotations

from dataclasses import dataclass


# Keywords only: the fields merge the proxy's and the server's old classes, whose positional
# orders differed, so ServerLimits(8 << 20, 4096) must fail loudly rather than set max_depth.
@dataclass(frozen=True, kw_only=True)
class RequestLimits:
    """What one request may hold; past a limit the answer is a 413 (body size) or a 400."""

    max_body_bytes: int = 8 * 1024 * 1024  # both: 413 past this
    max_depth: int = 64  # proxy: nesting of objects and arrays
    max_string_chars: int = 1024 * 1024  # proxy: any one string, keys included
    max_messages: int = 1024  # proxy: messages / input items per request
    max_input_ids: int = 32768  # server: prompt tokens
    # Both: the completion length asked for (max_tokens, max_completion_tokens,
    # max_output_tokens, sampling_params.max_new_tokens). Claude Code asks for 128000 by
    # default; the model's positions and engine_max_tokens cap what is generated.
    max_new_tokens: int = 131072
    max_n: int = 16  # proxy: completions per chat request
    max_stop: int = 16  # both: stop strings (and the server's stop_token_ids)
    max_stop_chars: int = 256  # server: each stop string
    max_tools: int = 128  # proxy
    max_token_id: int = 2**31 - 1  # server: each id in input_ids and stop_token_ids
