# SPDX-License-Identifier: Apache-2.0
"""Tool-calling episodes whose whole tool list is drawn fresh: the skill is reading the schema.

Issue 39: a user's agent never uses the template's tool names, so the model has to copy the
name, the argument names and the values from the prompt instead of remembering them. Each
episode draws 1-6 tools with invented names (snake_case or camelCase), 1-4 typed arguments,
a fresh description ("Convert the hajexi."), and asks for one of them by its description with
the values in argument order. The tool answers with a short result that the assistant repeats.

The same generator makes the training data and the held-out evaluation from two disjoint
``Names`` vocabularies. ``LETTERS`` / ``LETTERS_HELD_OUT`` (the first pilot's): evaluation
names use letters (c h j q w x y) no training syllable has. ``ALPHABET`` / ``ALPHABET_HELD_OUT``
(fairer to a user's English names, still strict): both sides cover every letter, with disjoint
consonant-vowel syllables and disjoint English words, so no training draw can make an
evaluation name (a consonant-vowel string splits into syllables one way only).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from areal_runtime.models.tool_episodes import (
    AGENT_NAMES,
    SYLLABLES,
    ToolEpisode,
    chat_tool,
    handoff_tool,
)

Shape = Literal["chat", "responses", "anthropic", "claude_code"]
SHAPES: tuple[Shape, ...] = ("chat", "responses", "anthropic", "claude_code")
TRAIN_SYLLABLES = SYLLABLES
# Every one holds a letter (c, h, j, q, w, x, y) absent from the training syllables.
EVAL_SYLLABLES = ["ha", "je", "wo", "xi", "yu", "cu", "qa", "hi", "jo", "wu", "xe", "ya", "co"]
VERBS = {  # the description's verb, which the question repeats
    "train": ["Get", "Set", "Convert", "Find", "Count", "Send", "Check", "Book", "Move", "Open"],
    "eval": ["Fetch", "Update", "Compute", "Locate", "Store", "Cancel", "Rate", "Load"],
}
KINDS = ("integer", "number", "string")
# The JSON type each client's schema gives a value kind.
SCHEMA_TYPE = {"integer": "integer", "number": "number", "string": "string"}
SYSTEM_PROMPTS = ["You are a helpful assistant.", "Use the tools when needed.", ""]
MCP_SERVERS = ["files", "notes", "db", "web", "tasks"]
CONSONANTS, VOWELS = "bcdfghjklmnpqrstvwxyz", "aeiou"
# Held out of the alphabet vocabulary: the pilot's evaluation syllables plus one for every other
# consonant (none of the pilot's training syllables), so both sides hold every letter.
ALPHABET_EVAL_SYLLABLES = [
    *EVAL_SYLLABLES,
    *["bu", "de", "fo", "gi", "ku", "le", "ma", "no", "pe", "ri", "so", "ta", "vi", "ze"],
]
ALPHABET_TRAIN_SYLLABLES = [
    c + v for c in CONSONANTS for v in VOWELS if c + v not in ALPHABET_EVAL_SYLLABLES
]
# English-like words, as users name tools and arguments; the two lists share none, and none
# of either is a run of the other side's syllables (tests/areal_runtime/models).
TRAIN_WORDS = [
    "get", "set", "value", "count", "name", "city", "date", "price", "item", "user", "file",
    "path", "query", "limit", "rate", "filter", "text", "size", "color", "order", "index",
    "level", "score", "start", "end", "time", "unit", "key", "label", "note", "list", "page",
    "mode", "type", "speed", "weight", "length", "number", "input", "output", "result", "id",
    "base", "max", "min", "step", "format", "status", "lang", "country", "zip", "phone",
    "day", "week", "group", "role", "tag", "flag", "version", "total", "sum", "numbers",
    "first", "second",
]  # fmt: skip
EVAL_WORDS = [
    "convert", "celsius", "miles", "distance", "currency", "radius", "height", "width",
    "balance", "account", "email", "subject", "author", "title", "budget", "invoice",
    "planet", "orbit", "recipe", "flavor", "ticket", "seat", "route", "origin", "destination",
    "quantity", "product", "discount", "tax", "rating", "review", "voltage", "pressure",
    "humidity", "signal", "channel", "vector", "matrix", "degrees", "angle", "minutes",
    "hours", "year", "month",
]  # fmt: skip


@dataclass(frozen=True)
class Names:
    """Where a vocabulary draws names, words and verbs from, and how long its names run."""

    syllables: list[str]
    verbs: list[str]
    words: list[str] = field(default_factory=list)
    word_share: float = 0.0  # how often a name's word is an English one
    max_syllables: int = 2  # per made-up word
    max_parts: int = 2  # words per identifier
    pieces: tuple[str, ...] = ()  # tokenizer pieces to build words of (``piece_word``)
    piece_share: float = 0.0  # how often a made-up word is built of pieces


LETTERS = Names(TRAIN_SYLLABLES, VERBS["train"])
LETTERS_HELD_OUT = Names(EVAL_SYLLABLES, VERBS["eval"])
ALPHABET = Names(ALPHABET_TRAIN_SYLLABLES, VERBS["train"], TRAIN_WORDS, 0.3, 3, 3)
ALPHABET_HELD_OUT = Names(ALPHABET_EVAL_SYLLABLES, VERBS["eval"], EVAL_WORDS, 0.3, 3, 3)
VOCABULARIES = {"letters": (LETTERS, LETTERS_HELD_OUT), "alphabet": (ALPHABET, ALPHABET_HELD_OUT)}


def word(rng: random.Random, syllables: list[str], parts: int = 1, most: int = 2) -> str:
    """A made-up lowercase word of ``parts`` runs of 1..``most`` syllables (``"kalo"``)."""
    return "".join("".join(rng.choices(syllables, k=rng.randint(1, most))) for _ in range(parts))


def name_word(rng: random.Random, names: Names) -> str:
    """One word of an identifier: English (``word_share`` of the time) or made up."""
    if names.words and rng.random() < names.word_share:
        return rng.choice(names.words)
    if names.pieces and names.piece_share and rng.random() < names.piece_share:
        return piece_word(rng, names.pieces)
    return word(rng, names.syllables, most=names.max_syllables)


def piece_word(rng: random.Random, pieces: tuple[str, ...]) -> str:
    """A word of 1-3 tokenizer pieces (``"ctista"``), never one an evaluation vocabulary draws.

    Syllables and a few English words leave most of the tokenizer's pieces out of training
    names, and a piece never copied in training is copied badly ("subject" came out
    "subje me"): built of pieces, training names hold every piece a user's name can.
    """
    while True:
        drawn = "".join(rng.choices(pieces, k=rng.randint(1, 3)))
        if drawn not in EVAL_WORDS and not _splits(drawn, ALPHABET_EVAL_SYLLABLES):
            return drawn


def _splits(text: str, syllables: list[str]) -> bool:
    """Whether ``text`` is a run of ``syllables`` (consonant-vowel pairs split one way only)."""
    return not text or any(
        text.startswith(s) and _splits(text[len(s) :], syllables) for s in syllables
    )


def identifier(rng: random.Random, syllables: list[str] | Names, parts: int) -> str:
    """A made-up identifier of ``parts`` words, snake_case or camelCase at random."""
    names = syllables if isinstance(syllables, Names) else Names(syllables, [])
    words = [name_word(rng, names) for _ in range(parts)]
    if rng.random() < 0.5:
        return "_".join(words)
    return words[0] + "".join(w.title() for w in words[1:])


def value(rng: random.Random, kind: str, syllables: list[str] | Names) -> int | float | str:
    """A value of ``kind``: a small integer, a decimal with one or two places, or a short word."""
    if kind == "integer":
        return rng.randint(0, 99)
    if kind == "number":
        return round(rng.randint(0, 999) / rng.choice((10, 100)), 2)
    if isinstance(syllables, Names):
        return name_word(rng, syllables)
    return word(rng, syllables)


@dataclass(frozen=True)
class ToolSpec:
    """One drawn tool: its name, description, noun (what the question asks about), arguments."""

    name: str
    verb: str
    noun: str
    args: tuple[tuple[str, str], ...]  # (name, kind)

    @property
    def description(self) -> str:
        return f"{self.verb} the {self.noun}."


def draw_tool(
    rng: random.Random, syllables: list[str] | Names, verbs: list[str], shape: Shape
) -> ToolSpec:
    """A tool with a fresh name, description and 1-4 distinct typed arguments."""
    names = syllables if isinstance(syllables, Names) else Names(syllables, verbs)
    name = identifier(rng, names, rng.randint(1, names.max_parts))
    if shape == "claude_code":  # Claude Code names MCP tools mcp__<server>__<tool>
        name = f"mcp__{rng.choice(MCP_SERVERS)}__{name}"
    arg_names: list[str] = []
    n_args = rng.randint(1, 4)
    while len(arg_names) < n_args:
        candidate = identifier(rng, names, rng.randint(1, names.max_parts))
        if candidate not in arg_names:
            arg_names.append(candidate)
    args = tuple((a, rng.choice(KINDS)) for a in arg_names)
    return ToolSpec(name, rng.choice(verbs), word(rng, names.syllables, 2), args)


def _client(shape: Shape) -> str:
    return {"chat": "chat", "responses": "agents_sdk"}.get(shape, "anthropic")


def render_tool(shape: Shape, spec: ToolSpec) -> dict[str, Any]:
    """The tool as the proxy hands it to the chat template for ``shape``'s request."""
    tool = chat_tool(_client(shape), spec.name, spec.description, tuple(a for a, _ in spec.args))
    for arg, kind in spec.args:  # chat_tool types every argument alike
        tool["function"]["parameters"]["properties"][arg]["type"] = SCHEMA_TYPE[kind]
    return tool


def _literal(v: int | float | str) -> str:
    return json.dumps(v)


def schema_episode(
    rng: random.Random,
    n_tools: int | None = None,
    shape: Shape | None = None,
    held_out: bool = False,
    names: Names | None = None,
    system_prompts: list[str] = SYSTEM_PROMPTS,
) -> ToolEpisode:
    """One copy-task episode: call the asked tool with the question's values, then answer.

    ``names`` picks the vocabulary (default: ``LETTERS``, or ``LETTERS_HELD_OUT`` when
    ``held_out``); ``system_prompts=[""]`` gives the short prompts of the copy curriculum.
    """
    syllables = names or (LETTERS_HELD_OUT if held_out else LETTERS)
    verbs = syllables.verbs
    shape = shape or rng.choice(SHAPES)
    n_tools = n_tools or rng.randint(1, 6)
    specs: list[ToolSpec] = []
    while len(specs) < n_tools:
        spec = draw_tool(rng, syllables, verbs, shape)
        if all(spec.name != s.name and spec.noun != s.noun for s in specs):
            specs.append(spec)
    target = rng.choice(specs)
    values = {a: value(rng, kind, syllables) for a, kind in target.args}
    tools = [render_tool(shape, s) for s in specs]
    if shape == "responses" and rng.random() < 0.3:  # the Agents SDK's handoffs
        tools += [handoff_tool(n) for n in rng.sample(AGENT_NAMES, rng.randint(1, 2))]
        rng.shuffle(tools)
    listed = ", ".join(_literal(v) for v in values.values())
    messages: list[dict[str, Any]] = []
    system = rng.choice(system_prompts)
    if system and shape != "anthropic":
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": f"{target.verb} the {target.noun}: {listed}"})
    result = str(value(rng, rng.choice(KINDS), syllables))
    call = {"name": target.name, "arguments": values}
    return ToolEpisode(messages, tools, call, result, result)


def padding_tools(
    rng: random.Random, shape: Shape, count: int, held_out: bool = True
) -> list[dict[str, Any]]:
    """``count`` more invented tools with long descriptions, to grow a prompt to a length."""
    syllables = EVAL_SYLLABLES if held_out else TRAIN_SYLLABLES
    verbs = VERBS["eval" if held_out else "train"]
    tools = []
    for _ in range(count):
        spec = draw_tool(rng, syllables, verbs, shape)
        tool = render_tool(shape, spec)
        extra = " ".join(word(rng, syllables, 2) for _ in range(12))
        tool["function"]["description"] = f"{spec.description} {extra}."
        tools.append(tool)
    return tools


def long_schema_episode(rng: random.Random, padding: int) -> ToolEpisode:
    """A training episode behind ``padding`` extra tools (~50 tokens each with the tiny
    tokenizer): the call and the answer, each closed by the EOS, are its "end your turn" targets
    on a long prompt."""
    episode = schema_episode(rng, rng.randint(1, 4))
    nouns = {t["function"].get("description", "") for t in episode.tools}
    extra = [
        t
        for t in padding_tools(rng, "chat", padding, held_out=False)
        if not any(t["function"]["description"].startswith(n[:-1]) for n in nouns if n)
    ]
    return ToolEpisode(
        episode.messages, extra + episode.tools, episode.call, episode.result, episode.answer
    )
