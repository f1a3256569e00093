# SPDX-License-Identifier: Apache-2.0
"""Agent-harness episodes: a question inside pages of prose ends in a short reply."""

import random
import re

from areal_runtime.models.harness_episodes import WORDS, environment, harness_episode, sdk_episode
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


def _question(messages: list[dict]) -> tuple[int, int, str]:
    (user,) = [m for m in messages if m["role"] == "user"]
    a, op, b = re.search(r"What is (\d+)([-+*/])(\d+)\?", user["content"]).groups()
    return int(a), int(b), op


def test_with_env_share_an_environment_turn_full_of_numbers_follows_the_question():
    rng, seen = random.Random(3), {"call": 0, "direct": 0}
    for _ in range(40):
        episode, direct = harness_episode(rng, 2000, env_share=1.0, tool_share=0.5)
        messages = episode.messages if episode else direct[0]
        assert [m["role"] for m in messages] == ["system", "user", "system"]
        assert len(re.findall(r"\d+", messages[-1]["content"])) >= 3  # the distractors
        a, b, _ = _question(messages)
        if episode:
            seen["call"] += 1
            offered = [t["function"]["name"] for t in episode.tools]
            assert episode.call["name"] in offered and episode.call["name"].startswith("mcp__")
            assert sorted(episode.call["arguments"].values()) == sorted([a, b])
        else:
            seen["direct"] += 1
            assert direct[2] == str(a + b)
    assert seen["call"] and seen["direct"]


def test_tool_share_sets_how_many_harness_requests_offer_a_sum_tool():
    rng = random.Random(4)
    offered = sum(harness_episode(rng, 1000, tool_share=0.0)[0] is not None for _ in range(30))
    assert offered == 0


def test_an_agent_sdk_episode_calls_its_own_mcp_tool_with_the_questions_operands():
    rng, names = random.Random(5), RowMaker(0).names
    for _ in range(40):
        episode = sdk_episode(rng, names)
        assert [m["role"] for m in episode.messages] == ["system", "user", "system"]
        offered = [t["function"]["name"] for t in episode.tools]
        servers = {n.split("__")[1] for n in offered if n.startswith("mcp__")}
        assert len(servers) == 1 and episode.call["name"] in offered  # one server's tools
        a, b, _ = _question(episode.messages)
        assert list(episode.call["arguments"].values()) == [a, b]


def test_the_environment_lists_mcp_names_that_are_not_offered_as_tools():
    text = "\n".join(environment(random.Random(s), 600) for s in range(20))
    assert "mcp__" in text and "Today's date is" in text
