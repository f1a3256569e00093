# SPDX-License-Identifier: Apache-2.0
"""Fresh tool lists (issue 39): the copy task's generator and the held-out measure's draws."""

import json
import random
import re

from areal_runtime.models.schema_episodes import (
    ALPHABET,
    ALPHABET_HELD_OUT,
    CONSONANTS,
    LETTERS,
    LETTERS_HELD_OUT,
    SHAPES,
    TRAIN_SYLLABLES,
    VOWELS,
    long_schema_episode,
    schema_episode,
)
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import ARG_NAMES, DISTRACTORS, SUM_NAMES, sample_episode
from areal_runtime.models.tool_skill_eval import (
    call_spans,
    held_out_episodes,
    long_prompt,
    score_call,
)
from areal_runtime.models.train_tools import encode_packed

EVAL_ONLY_LETTERS = set("chjqwxy")
TYPES = {int: "integer", float: "number", str: "string"}


def _names(episode) -> set[str]:
    names = set()
    for tool in episode.tools:
        fn = tool["function"]
        names.add(fn["name"].split("__")[-1])
        names.update(fn["parameters"]["properties"])
    return {n for n in names if not n.startswith("transfer_to_")}


def test_evaluation_names_are_never_training_names():
    assert not EVAL_ONLY_LETTERS & set("".join(TRAIN_SYLLABLES))
    fixed = {
        *SUM_NAMES["train"],
        *(a for pair in ARG_NAMES["train"] for a in pair),
        *(name for name, _, _ in DISTRACTORS),
    }
    held_out = [e for n in (1, 4) for e in held_out_episodes(n, 200, seed=n)]
    held_out_names = set().union(*map(_names, held_out))
    for name in held_out_names:
        assert name not in fixed
        assert EVAL_ONLY_LETTERS & set(name.lower()), name  # so no training draw can make it
    rng = random.Random(0)
    drawn = set().union(*(_names(schema_episode(rng)) for _ in range(300)))
    for name in drawn:  # the training copy task's invented names
        assert not EVAL_ONLY_LETTERS & set(name.lower()), name
    bundled_varied = set().union(*(_names(sample_episode(rng)) for _ in range(300)))
    assert not held_out_names & (drawn | bundled_varied)


def test_the_evaluation_draw_is_fixed_by_its_seed():
    first, again = held_out_episodes(4, 30, seed=7), held_out_episodes(4, 30, seed=7)
    assert [(e.messages, e.tools, e.call) for e in first] == [
        (e.messages, e.tools, e.call) for e in again
    ]
    other = held_out_episodes(4, 30, seed=8)
    assert [e.call for e in first] != [e.call for e in other]


def test_every_request_shape_and_name_style_is_drawn():
    episodes = held_out_episodes(4, 40, seed=1)
    assert all(
        len([t for t in e.tools if "transfer_to_" not in json.dumps(t)]) == 4 for e in episodes
    )
    names = [e.call["name"] for e in episodes]
    assert sum(n.startswith("mcp__") for n in names) == 40 // len(SHAPES)  # Claude Code's turn
    args = {a for e in episodes for a in e.call["arguments"]}
    assert any("_" in a for a in args) and any(re.search(r"[a-z][A-Z]", a) for a in args)
    arg_counts = {len(e.call["arguments"]) for e in episodes}
    assert arg_counts == {1, 2, 3, 4}


def test_the_call_is_built_from_the_schema_and_the_question():
    rng = random.Random(3)
    for _ in range(200):
        episode = schema_episode(rng)
        (target,) = [
            t["function"] for t in episode.tools if t["function"]["name"] == episode.call["name"]
        ]
        props = target["parameters"]["properties"]
        assert list(episode.call["arguments"]) == list(props)
        for arg, v in episode.call["arguments"].items():
            assert TYPES[type(v)] == props[arg]["type"]
        question = episode.messages[-1]["content"]
        noun = target["description"].split(" the ")[1].rstrip(".")
        assert f" the {noun}:" in question  # the question names its tool by the description
        others = [t["function"].get("description", "") for t in episode.tools]
        assert sum(f" the {noun}." in d for d in others) == 1
        assert question.endswith(
            ", ".join(json.dumps(v) for v in episode.call["arguments"].values())
        )


def test_a_schema_episode_trains_its_call_and_its_answer():
    tok = tiny_tokenizer()
    episode = schema_episode(random.Random(5), n_tools=3, shape="responses")
    _, labels = encode_packed(tok, episode)
    trained = tok.decode([t for t in labels if t != -100])
    assert trained == f"{episode.call_text()}<|im_end|>{episode.answer}<|im_end|>"


def test_score_call_separates_name_argument_names_and_values():
    expected = {"name": "hoja", "arguments": {"xe": 3, "cuWo": "ha"}}
    assert score_call(expected, expected) == {"name": True, "arg_names": True, "call": True}
    wrong_value = {"name": "hoja", "arguments": {"cuWo": "ha", "xe": 4}}
    assert score_call(wrong_value, expected) == {"name": True, "arg_names": True, "call": False}
    wrong_name = {"name": "add", "arguments": {"xe": 3, "cuWo": "ha"}}
    assert score_call(wrong_name, expected) == {"name": False, "arg_names": True, "call": False}
    assert score_call(None, expected) == {"name": False, "arg_names": False, "call": False}


def test_long_prompts_reach_the_asked_length():
    tok = tiny_tokenizer()
    for length in (1024, 4096):
        size = len(long_prompt(tok, random.Random(length), length))
        assert length <= size < length * 1.15, size


def test_a_long_episode_keeps_its_call_and_ends_both_turns():
    tok = tiny_tokenizer()
    rng = random.Random(11)
    short = schema_episode(rng, rng.randint(1, 4))  # the draws long_schema_episode makes first
    episode = long_schema_episode(random.Random(11), padding=40)
    assert episode.call == short.call and len(episode.tools) > len(short.tools) + 30
    noun = episode.messages[-1]["content"].split(":")[0]  # "<Verb> the <noun>"
    assert sum(t["function"]["description"].startswith(noun) for t in episode.tools) == 1
    ids, labels = encode_packed(tok, episode)
    assert len(ids) > 2000
    trained = tok.decode([t for t in labels if t != -100])
    assert trained == f"{episode.call_text()}<|im_end|>{episode.answer}<|im_end|>"


def test_call_spans_cover_the_name_and_each_value():
    for episode in held_out_episodes(4, 12, seed=2):
        text = episode.call_text()
        spans = call_spans(episode)
        assert [text[a:b] for a, b in spans["name"]] == [episode.call["name"]]
        values = [json.loads(text[a:b]) for a, b in spans["values"]]
        assert values == list(episode.call["arguments"].values())


def _segments(word: str, syllables: list[str]) -> bool:
    """Whether ``word`` is a run of ``syllables`` (consonant-vowel pairs split one way only)."""
    return not word or any(
        word.startswith(s) and _segments(word[len(s) :], syllables) for s in syllables
    )


def _words(identifier: str) -> list[str]:
    """An identifier's words: the MCP prefix dropped, split at ``_`` and at camelCase humps."""
    name = identifier.split("__")[-1]
    return [w.lower() for part in name.split("_") for w in re.findall(r"[A-Za-z][a-z]*", part)]


def _alphabet_can_draw(word: str) -> bool:
    return word in ALPHABET.words or _segments(word, ALPHABET.syllables)


def test_both_alphabet_vocabularies_hold_every_letter_and_share_no_syllable_or_word():
    letters = set(CONSONANTS + VOWELS)
    assert set("".join(ALPHABET.syllables)) == letters
    assert set("".join(ALPHABET_HELD_OUT.syllables)) == letters
    assert not set(ALPHABET.syllables) & set(ALPHABET_HELD_OUT.syllables)
    assert set(LETTERS_HELD_OUT.syllables) <= set(ALPHABET_HELD_OUT.syllables)
    assert set(LETTERS.syllables) <= set(ALPHABET.syllables)
    for word in ALPHABET_HELD_OUT.words:
        assert not _alphabet_can_draw(word), word
    for word in ALPHABET.words:
        assert not _segments(word, ALPHABET_HELD_OUT.syllables), word


def test_alphabet_held_out_names_are_never_names_training_can_draw():
    fixed = {
        w
        for name in [*SUM_NAMES["train"], *(a for p in ARG_NAMES["train"] for a in p)]
        + [name for name, _, _ in DISTRACTORS]
        for w in _words(name)
    }
    held_out = [
        e for n in (1, 4) for e in held_out_episodes(n, 200, seed=n, names=ALPHABET_HELD_OUT)
    ]
    words = {w for e in held_out for name in _names(e) for w in _words(name)}
    words |= {str(v) for e in held_out for v in e.call["arguments"].values() if isinstance(v, str)}
    assert words & set(ALPHABET_HELD_OUT.words) and len(words) > 300  # both kinds are drawn
    for word in words:
        assert not _alphabet_can_draw(word) and word not in fixed, word
    rng = random.Random(0)
    trained = [schema_episode(rng, names=ALPHABET) for _ in range(300)]
    trained_words = {w for e in trained for name in _names(e) for w in _words(name)}
    assert len(set("".join(trained_words))) == 26 and not words & trained_words


def test_the_alphabet_evaluation_draw_is_fixed_by_its_seed():
    def draw(seed: int):
        return [
            (e.messages, e.tools, e.call)
            for e in held_out_episodes(4, 30, seed=seed, names=ALPHABET_HELD_OUT)
        ]

    assert draw(7) == draw(7) and draw(7) != draw(8)
