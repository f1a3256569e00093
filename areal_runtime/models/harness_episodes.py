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

Claude Code and the Claude Agent SDK also send a system turn *after* the user's: an environment
block of versions, paths, a model id and the date, then lists of deferred tools, agent types and
skills. Behind it the model copied the date's digits (``18``, ``25``, ``26``) instead of the
question's, and the agent_claude scaffold scored 0.06. ``environment`` draws such blocks
(their numbers fresh, their wording invented, MCP tool names listed that are not offered),
``harness_episode(..., env_share=...)`` puts one after the question, and ``sdk_episode`` is the
SDK's shape: a short system prompt, a calculator as MCP tools named fresh, the question, then
the environment block.
"""

from __future__ import annotations

import random
from typing import Any

from areal_runtime.models.calculator_episodes import calculator_episode
from areal_runtime.models.default_model import MAX_OPERAND
from areal_runtime.models.schema_episodes import Names, name_word
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
# Four fixed names, as the fourth stage drew them. The model learned them as names (it called
# ``mcp__tools__sum`` where the agent_claude scaffold offers ``mcp__tools__add``), so a request
# with an environment turn (``env_share``, the later stages) names its sum tool fresh: a
# server and a verb, each a common spelling or a made-up word.
SUM_TOOLS = (("calc", "add"), ("math", "add"), ("calculator", "add"), ("tools", "sum"))
SERVERS = ("tools", "calc", "math", "calculator", "arith", "numbers", "utils", "local", "demo")
SUM_VERBS = ("add", "sum", "plus", "add_numbers", "addition", "sum_numbers", "total")
SUM_ARGS = (("a", "b"), ("x", "y"), ("first", "second"), ("num1", "num2"), ("left", "right"))
ENV_KEYS = (
    "Working directory", "Primary directory", "Platform", "Shell", "OS", "Kernel", "Runtime",
    "Node", "Python", "Git branch", "Last commit", "Model", "Model id", "Session", "Terminal",
    "Editor", "Files changed", "Open tabs", "Context left", "Build", "Cutoff", "Locale",
)  # fmt: skip
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


def _version(rng: random.Random) -> str:
    parts = [str(rng.randint(0, 30)) for _ in range(rng.randint(2, 4))]
    return ".".join(parts) + rng.choice(("", "", f"-{rng.choice(WORDS)}{rng.randint(1, 999)}"))


def _env_value(rng: random.Random) -> str:
    """A value as environment lines hold them: numbers in most of them, as in the real ones."""
    roll = rng.random()
    if roll < 0.25:
        return _version(rng)
    if roll < 0.4:
        return "/" + "/".join(f"{rng.choice(WORDS)}{rng.choice(('', str(rng.randint(1, 99))))}"
                              for _ in range(rng.randint(1, 4)))  # fmt: skip
    if roll < 0.5:
        return rng.choice(("true", "false", "linux", "darwin", "bash", "zsh"))
    if roll < 0.65:
        word = rng.choice(WORDS).title()
        major, minor = rng.randint(1, 9), rng.randint(0, 9)
        return f"{word} {major}.{minor} ({word.lower()}-{major}-{minor})"
    if roll < 0.8:
        return str(rng.randint(0, 99999))
    return f"{rng.randrange(16**7):07x} {sentence(rng)}"


def _date(rng: random.Random) -> str:
    return f"20{rng.randint(20, 39)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def environment(rng: random.Random, tokens: int) -> str:
    """A harness's system turn after the question, about ``tokens`` long: key-value lines full
    of numbers, then lists of tool names, agent types and skills, often the date last."""
    lines = [rng.choice(("# Environment", "# Context", "Environment:", "<env>"))]
    lines += [f" - {key}: {_env_value(rng)}" for key in rng.sample(ENV_KEYS, rng.randint(3, 9))]
    budget = tokens * CHARS_PER_TOKEN
    while sum(map(len, lines)) < budget:
        roll = rng.random()
        if roll < 0.3:  # a list of tools to load later: not callable, MCP names among them
            lines.append(sentence(rng))
            listed = rng.sample(HARNESS_TOOLS, rng.randint(3, 12))
            for _ in range(rng.choice((0, 0, 1, 2, 3))):
                verb = rng.choice((*SUM_VERBS, *(t.lower() for t in HARNESS_TOOLS)))
                listed.insert(rng.randrange(len(listed) + 1), f"mcp__{mcp_server(rng)}__{verb}")
            lines += listed
        elif roll < 0.7:
            name = rng.choice(HARNESS_TOOLS + WORDS).lower()
            lines.append(f"- {name}: {sentence(rng)} {sentence(rng)}")
        else:
            lines.append(prose(rng, rng.randint(20, 200)))
    if rng.random() < 0.7:
        lines.append(f"Today's date is {_date(rng)}.")
    return "\n".join(lines)


def mcp_server(rng: random.Random, words: Names | None = None) -> str:
    """An MCP server's name: a common one, or a made-up word of ``words``."""
    if words is not None and rng.random() < 0.4:
        return name_word(rng, words)
    return rng.choice(SERVERS)


def sdk_episode(rng: random.Random, words: Names | None = None) -> ToolEpisode:
    """The Claude Agent SDK's request: a header and a preamble before the agent's own system
    prompt, a calculator as MCP tools (a fresh server, each tool's spelling drawn as
    ``calculator_episode`` draws it), maybe a placeholder tool, the question, then an
    environment block in a system turn of its own."""
    episode = calculator_episode(rng)
    server = mcp_server(rng, words)
    names = {}
    tools = []
    for tool in episode.tools:
        fn = dict(tool["function"])
        if fn["name"].startswith("transfer_to_"):
            continue
        names[fn["name"]] = fn["name"] = f"mcp__{server}__{fn['name']}"
        tools.append({"type": "function", "function": fn})
    if rng.random() < 0.3:
        placeholder = chat_tool("anthropic", rng.choice(HARNESS_TOOLS) + "Placeholder",
                                f"Reserved; {sentence(rng)}", ())  # fmt: skip
        tools.insert(rng.randrange(len(tools) + 1), placeholder)
    system = [m["content"] for m in episode.messages if m["role"] == "system"]
    header = f"x-{rng.choice(WORDS)}-header: v={_version(rng)}; entry={rng.choice(WORDS)};"
    preamble = sentence(rng) if rng.random() < 0.7 else ""
    question = [m for m in episode.messages if m["role"] == "user"]
    if rng.random() < 0.3:
        question = [{"role": "user", "content": reminder(rng, rng.randint(20, 200))
                     + question[0]["content"]}]  # fmt: skip
    messages = [
        {"role": "system", "content": " ".join(p for p in (header, preamble, *system) if p)},
        *question,
        {"role": "system", "content": environment(rng, rng.randint(40, 300))},
    ]
    call = {"name": names[episode.call["name"]], "arguments": episode.call["arguments"]}
    return ToolEpisode(messages, tools, call, episode.result, episode.answer)


def harness_episode(
    rng: random.Random, tokens: int, env_share: float = 0.0, words: Names | None = None,
    tool_share: float = 0.5,
) -> tuple[ToolEpisode | None, Any]:  # fmt: skip
    """A question inside a harness request of about ``tokens`` tokens; ``env_share`` of them
    with an environment block in a system turn after the question and the sum tool named fresh
    (``words``: a ``schema_episodes.Names`` for made-up server names); ``tool_share`` of them
    offer a sum tool (Claude Code itself offers none).

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
    trailing = env_share > 0 and rng.random() < env_share
    if not trailing and rng.random() < 0.5:
        after.append(f"Today's date is {_date(rng)}.")
    user = "".join(before) + question + "".join(after)
    messages = [
        {"role": "system", "content": prose(rng, share * 2)},
        {"role": "user", "content": user},
    ]
    if trailing:
        messages.append(
            {"role": "system", "content": environment(rng, rng.randint(100, share * 3))}
        )
    if rng.random() < tool_share:
        if trailing:
            name = f"mcp__{mcp_server(rng, words)}__{rng.choice(SUM_VERBS)}"
            args = rng.choice(SUM_ARGS)
            described = ("Add two numbers", "Add two numbers.", "Return the sum of two numbers.")
        else:  # as the fourth stage drew them
            server, verb = rng.choice(SUM_TOOLS)
            name, args = f"mcp__{server}__{verb}", ("a", "b")
            described = ("Add two numbers", "Add a and b.")
        sum_tool = chat_tool(client, name, rng.choice(described), args)
        tools.insert(rng.randrange(len(tools) + 1), sum_tool)
        call = {"name": name, "arguments": dict(zip(args, (a, b), strict=True))}
        total = str(a + b)
        return ToolEpisode(
            messages, tools, call, rng.choice((total, f"{float(a + b)}")), total
        ), None
    return None, (messages, tools, str(a + b))
