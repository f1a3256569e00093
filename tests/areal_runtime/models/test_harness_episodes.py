# SPDX-License-Identifier: Apache-2.0
"""Agent-harness episodes: a question inside pages of prose ends in a short reply."""

import random
import re

from areal_runtime.models.harness_episodes import WORDS, harness_episode
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.train_reader import RowMaker


def test_the_question_sits_inside_the_users_turn_and_the_reply_is_the_sum_or_its_call():
    rng = random.Random(0)
    kinds = set()
    for _ in range(40):
        episode, direct = harness_episode(rng, 2000)
        messages = episode.messages if episode else direct[0]
        tools = episode.tools if episode else direct[1]
        (a, b) = map(int, re.search(r"What is (\d+)\+(\d+)\?", messages[-1]["content"]).groups())
        names = [t["function"]["name"] for t in tools]
        if episode:
            kinds.add("call")
            assert episode.call["name"].startswith("mcp__") and episode.call["name"] in names
            assert episode.call["arguments"] == {"a": a, "b": b} and episode.answer == str(a + b)
        else:
            kinds.add("direct")
            assert direct[2] == str(a + b) and not any(n.startswith("mcp__") for n in names)
    assert kinds == {"call", "direct"}


def test_the_prose_is_invented_from_the_modules_own_words():
    episode, direct = harness_episode(random.Random(1), 3000)
    messages = episode.messages if episode else direct[0]
    words = set(re.findall(r"[a-z]+", messages[0]["content"].lower()))
    assert words <= set(WORDS) | {"important"}


def test_a_harness_row_is_long_and_trains_only_the_short_reply():
    maker, tok = RowMaker(2), tiny_tokenizer()
    lengths = []
    for _ in range(6):
        ids, labels, _ = maker.row("harness")
        trained = [t for t in labels if t != -100]
        lengths.append(len(ids))
        assert trained[-1] == tok.eos_token_id and len(trained) < 80
    assert max(lengths) > 4000 and min(lengths) > 500
