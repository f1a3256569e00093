# SPDX-License-Identifier: Apache-2.0
"""Build an engine from a short spec string, for the CLI and config files.

``local`` (the embedded default model), ``hf:PATH`` (a local HF model directory),
``scripted`` (replays each dataset row's ``answer``), ``sglang:HOST:PORT[,HOST:PORT]`` and
``vllm:HOST:PORT[,...]`` (remote servers).
"""

from __future__ import annotations

from typing import Any

ENGINE_SPECS = "local | hf:PATH | scripted | sglang:HOST:PORT[,...] | vllm:HOST:PORT[,...]"


def engine_from_spec(spec: str, *, rows: list[dict[str, Any]] | None = None, **kwargs: Any) -> Any:
    """An engine for ``spec``; ``rows`` feed the scripted engine's answers."""
    kind, _, rest = spec.partition(":")
    if kind == "local" and not rest:
        from areal_runtime.engine.local import LocalEngine

        return LocalEngine.default(**kwargs)
    if kind == "hf" and rest:
        from areal_runtime.engine.local import LocalEngine

        return LocalEngine.from_pretrained(rest, **kwargs)
    if kind == "scripted" and not rest:
        from areal_runtime.engine.scripted import ScriptedEngine
        from areal_runtime.models.tokenizers import tiny_tokenizer

        answers = [str(r.get("answer", "")) for r in rows or []]
        if not answers:
            raise ValueError(
                "the scripted engine replays each row's 'answer'; the dataset has none"
            )
        return ScriptedEngine(answers, tokenizer=tiny_tokenizer(), cycle=True)
    if kind in ("sglang", "vllm") and rest:
        from areal_runtime.engine.remote import RemoteEngine

        addresses = rest.split(",")
        for address in addresses:
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(
                    f"{kind} server address {address!r} is not HOST:PORT (e.g. 127.0.0.1:30000)"
                )
        return RemoteEngine(addresses, backend=kind, **kwargs)
    raise ValueError(f"unknown engine {spec!r}; use one of: {ENGINE_SPECS}")
