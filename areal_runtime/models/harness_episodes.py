# SPDX-License-Identifier: Apache-2.0
"""Agent harness prompts: pages of prose and tools around one question (Claude Code's shape).

Claude Code sends a ~26k-token request: a long natural-language system prompt, a dozen tools
with paragraph-long descriptions, and the user's question wrapped in ``<system-reminder>``
blocks of more prose (context, a skills list, the date). The embedded model had only seen
short prompts or long lists of short tools, and on this one it wrote made-up tool-call
fragments until the 512-token cap, so the CLI retried with "Output token limit hit". These
episodes put the question inside such a request, made of invented prose (no harness's own
text), and train the short reply that ends the turn: the sum tool's call when one is offered
(an MCP-style ``mcp__server__add``), else the answer itself.
"""

from __future__ import annotations

import random
from typing import Any

from areal_runtime.models.default_model import MAX_OPERAND
from areal_runtime.models.tool_episodes import ToolEpisode, chat_tool

_VOCABULARY = (
    "the a an and or but if when then so to of in on for with by from at as is are be was "
    "not no do does use used using run runs file files code project user users task tasks "
    "tool tools call calls answer answers question request result results output input text "
    "change changes test tests command commands shell path folder line lines read write edit "
    "search find open check make build keep always never only each every all any other more "
    "less first last next before after instead without within about into over under this that "
    "these those it its you your we our they their should must may can will would prefer avoid "
    "important note example examples context session message messages reply replies short long "
    "clear simple careful safe work working git branch commit status review plan step steps "
    "agent agents model data value values list lists name names option options mode settings "
    "error errors report summary detail details format markdown block blocks time date today"
)
WORDS = tuple(_VOCABULARY.split())
HARNESS_TOOLS = (
    "Agent", "Bash", "Edit", "Read", "Write", "Glob", "Grep", "Task", "WebFetch", "WebSearch",
    "TodoWrite", "NotebookEdit", "ListFiles", "Skill", "Schedule", "Report", "Plan", "Shell",
    "Search", "Fetch", "Open", "Run", "MultiEdit", "ToolSearch", "Workflow", "Memory",
)  # fmt: skip
PARAMS = (
    "command", "path", "file_path", "pattern", "query", "url", "prompt", "description",
    "content", "old_string", "new_string", "timeout", "limit", "offset", "todos", "skill",
)  # fmt: skip
# Four fixed names, as the shipped fourth stage drew them. The model learned them as names: it
# calls ``mcp__tools__sum`` where the agent_claude scaffold offers ``mcp__tools__add``, and
# ``mcp__calculator__add`` where Claude Code offers none (BENCHMARKS.md).
SUM_TOOLS = (("calc", "add"), ("math", "add"), ("calculator", "add"), ("tools", "sum"))
CHARS_PER_TOKEN = 1.4  # the tiny tokenizer on English prose


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 18))]
    if rng.random() < 0.15:
        words.insert(rng.randrange(len(words)), f"`{rng.choice(WORDS)}_{rng.choice(WORDS)}`")
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".....:;")


def prose(rng: random.Random, tokens: int) -> str:
    """Markdown-like pages of invented sentences, about ``tokens`` tokens long."""
    parts: list[str] = []
    size, budget = 0, tokens * CHARS_PER_TOKEN
    while size < budget:
        roll = rng.random()
        if roll < 0.08:
            part = f"\n# {sentence(rng)[:-1].title()}\n"
        elif roll < 0.4:
            part = f" - {sentence(rng)}\n"
        elif roll < 0.45:
            part = f"IMPORTANT: {sentence(rng)}\n"
        else:
            part = " ".join(sentence(rng) for _ in range(rng.randint(1, 4))) + "\n"
        parts.append(part)
        size += len(part)
    return "".join(parts)


def reminder(rng: random.Random, tokens: int) -> str:
    return f"<system-reminder>\n{prose(rng, tokens)}</system-reminder>"


def harness_episode(rng: random.Random, tokens: int) -> tuple[ToolEpisode | None, Any]:
    """A question inside a harness request of about ``tokens`` tokens.

    Returns ``(episode, None)`` when a sum tool is offered (the call, then the answer), else
    ``(None, (messages, tools, answer))`` for a direct answer.
    """
    n_tools = rng.randint(3, 16)
    share = tokens // (n_tools + 3)  # the system prompt, the reminders and each description
    client = rng.choice(("anthropic", "chat"))
    tools = []
    for name in rng.sample(HARNESS_TOOLS, n_tools):
        params = tuple(rng.sample(PARAMS, rng.randint(1, 4)))
        text = prose(rng, rng.randint(20, max(40, share)))
        tools.append(chat_tool(client, name, text, params, rng.choice(("string", "integer"))))
    a, b = rng.randint(0, MAX_OPERAND), rng.randint(0, MAX_OPERAND)
    question = f"What is {a}+{b}?"
    before = [reminder(rng, rng.randint(20, share)) for _ in range(rng.randint(0, 2))]
    after = [reminder(rng, rng.randint(20, share)) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.5:
        after.append(
            f"Today's date is 20{rng.randint(20, 39)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}."
        )
    user = "".join(before) + question + "".join(after)
    messages = [
        {"role": "system", "content": prose(rng, share * 2)},
        {"role": "user", "content": user},
    ]
    if rng.random() < 0.5:
        server, verb = rng.choice(SUM_TOOLS)
        name = f"mcp__{server}__{verb}"
        sum_tool = chat_tool(
            client, name, rng.choice(("Add two numbers", "Add a and b.")), ("a", "b")
        )
        tools.insert(rng.randrange(len(tools) + 1), sum_tool)
        call = {"name": name, "arguments": {"a": a, "b": b}}
        total = str(a + b)
        return ToolEpisode(
            messages, tools, call, rng.choice((total, f"{float(a + b)}")), total
        ), None
    return None, (messages, tools, str(a + b))
