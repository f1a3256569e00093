# SPDX-License-Identifier: Apache-2.0
"""Does the embedded model read the question behind Claude Code's environment block? (issue 39)

Claude Code and the Claude Agent SDK send a system turn after the user's question: versions,
paths, a model id and the date (and in Claude Code's case pages of tool, agent and skill lists).
Three requests, each with ``--n`` fresh ``What is a+b?`` questions, rendered as ``serve``
renders a Messages request (the captured fixtures in ``client_requests/``):

- **scaffold**: the ``agent_claude`` template's request: the captured Agent SDK request with the
  scaffold's system prompt and its one tool, ``mcp__tools__add(a, b)``; right = that call with
  the question's operands, greedy and at T=1;
- **sdk calculator**: the captured Agent SDK request as it is (a six-tool calculator as MCP
  tools); right = ``mcp__calc__add`` with the operands;
- **claude code**: the CLI's own 26k-token request, which offers no calculator; right = a greedy
  reply that is the sum, and whether it ended within 64 tokens.

    PYTHONPATH=. python benchmarks/bench_claude_agents.py [--model DIR ...] [--n 32] [--cli 6]

``--dump FILE`` writes the rendered prompts (token ids and expected replies) and ``--prompts
FILE`` reads them back, so a machine without the proxy's dependencies can score a model.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from pathlib import Path
from typing import Any

from _util import CLIENT_REQUESTS, asking

from areal_runtime.models.default_model import MAX_OPERAND, MODEL_DIR
from areal_runtime.models.tool_episodes import parsed_call

SDK_PROMPT = (  # the captured agent's own system prompt, replaced by the scaffold's
    "Answer the user's math questions using the available calculator tools. Don't give the "
    "answer directly, you must use tools to do the mathematical calculation."
)
SCAFFOLD_PROMPT = "Answer the user's question. Use the add tool for sums."  # agent_claude's
SCAFFOLD_TOOL = {
    "name": "mcp__tools__add",
    "description": "Add two numbers.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def scaffold_body(body: dict[str, Any]) -> dict[str, Any]:
    """The Agent SDK fixture as the agent_claude scaffold sends it."""
    body = copy.deepcopy(body)
    texts = [block for block in body["system"] if block.get("text") == SDK_PROMPT]
    if len(texts) != 1:
        raise SystemExit("the Agent SDK fixture's system prompt changed: update SDK_PROMPT")
    texts[0]["text"] = SCAFFOLD_PROMPT
    body["tools"] = [SCAFFOLD_TOOL]
    return body


def render(n: int, cli: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Each request's prompts as token ids, with the expected call or reply."""
    from areal_runtime.experimental.openai.proxy.apis.anthropic_messages import (
        parse_messages_request,
    )
    from areal_runtime.experimental.openai.proxy.generation import render_prompt
    from areal_runtime.models.tokenizers import tiny_tokenizer

    tok = tiny_tokenizer()
    sdk = json.loads((CLIENT_REQUESTS / "claude_agent_sdk/000.json").read_text())["body"]
    code = json.loads((CLIENT_REQUESTS / "claude_code_cli/000.json").read_text())["body"]
    bodies = {"scaffold": (scaffold_body(sdk), "mcp__tools__add"),
              "sdk calculator": (sdk, "mcp__calc__add"), "claude code": (code, None)}  # fmt: skip
    rng = random.Random(seed)
    out: dict[str, list[dict[str, Any]]] = {}
    for label, (body, tool) in bodies.items():
        rows = []
        for _ in range(cli if tool is None else n):
            a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
            request = parse_messages_request(asking(body, f"What is {a}+{b}?"), tok)
            expected = (
                {"name": tool, "arguments": {"a": a, "b": b}} if tool else {"reply": str(a + b)}
            )
            rows.append({"ids": render_prompt(tok, request), "expected": expected})
        out[label] = rows
    return out


def _generate(model: Any, tok: Any, ids: list[int], greedy: bool) -> list[int]:
    import torch

    device = next(model.parameters()).device
    with torch.no_grad():
        out = model.generate(
            torch.tensor([ids], device=device), do_sample=not greedy, temperature=1.0,
            top_p=1.0, max_new_tokens=96, eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        )  # fmt: skip
    return out[0, len(ids) :].tolist()


def score(model: Any, tok: Any, prompts: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    import torch

    torch.manual_seed(0)
    result: dict[str, Any] = {}
    for label, rows in prompts.items():
        modes = (True,) if label == "claude code" else (True, False)
        for greedy in modes:
            right, ended, replies = 0, 0, []
            for row in rows:
                new = _generate(model, tok, row["ids"], greedy)
                ended += tok.eos_token_id in new[:64]
                text = tok.decode(new, skip_special_tokens=False)
                text = text.replace(tok.eos_token, "").replace(tok.pad_token, "").strip()
                expected = row["expected"]
                if "reply" in expected:
                    right += text == expected["reply"]
                    replies.append(text[:60])
                else:
                    right += parsed_call(text) == expected
            key = f"{label} {'greedy' if greedy else 'T=1'}"
            result[key] = {"right": right / len(rows), "eos64": ended / len(rows)}
            if replies:
                result[key]["replies"] = replies
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, nargs="+", default=[MODEL_DIR])
    parser.add_argument("--n", type=int, default=32, help="questions per Agent SDK request")
    parser.add_argument("--cli", type=int, default=6, help="questions on Claude Code's request")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--dump", type=Path, help="write the rendered prompts here and stop")
    parser.add_argument("--prompts", type=Path, help="read rendered prompts from here")
    args = parser.parse_args()
    if args.prompts:
        prompts = json.loads(args.prompts.read_text())
    else:
        prompts = render(args.n, args.cli, args.seed)
    if args.dump:
        args.dump.write_text(json.dumps(prompts))
        return
    import torch
    from transformers import AutoModelForCausalLM

    from areal_runtime.models.tokenizers import tiny_tokenizer

    cuda = torch.cuda.is_available()
    if not cuda:
        torch.set_num_threads(1)
    tok = tiny_tokenizer()
    print("| model | request | right | EOS within 64 |")
    print("|---|---|---|---|")
    for folder in args.model:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
        model = model.to("cuda" if cuda else "cpu")
        for key, figures in score(model, tok, prompts).items():
            print(f"| {folder.name} | {key} | {figures['right']:.2f} | {figures['eos64']:.2f} |")
            if "replies" in figures:
                print(f"|  | replies | {', '.join(figures['replies'])} | |")


if __name__ == "__main__":
    main()
