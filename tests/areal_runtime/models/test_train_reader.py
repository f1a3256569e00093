# SPDX-License-Identifier: Apache-2.0
"""The recipe of the shipped weights (issue 39): its rows, its names and its recorded config."""

import json
import random
import re

import pytest

from areal_runtime.models.default_model import MAX_POSITIONS, MODEL_DIR
from areal_runtime.models.schema_episodes import (
    ALPHABET_EVAL_SYLLABLES,
    ALPHABET_HELD_OUT,
    EVAL_WORDS,
    schema_episode,
)
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import BUNDLED, bundled_episode, sample_episode
from areal_runtime.models.tool_skill_eval import held_out_episodes
from areal_runtime.models.train_reader import (
    KIND_IDS,
    RECIPE,
    RECIPE_KEY,
    RowMaker,
    jumped,
    model_config,
    packed_row,
    padded,
    reader_names,
    train,
)
from areal_runtime.models.train_tools import encode_packed


def test_the_shipped_config_is_the_recipes_architecture_and_records_the_recipe():
    shipped = json.loads((MODEL_DIR / "config.json").read_text())
    expected = model_config(RECIPE[-1]["size"]).to_dict()
    for key in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
                "tie_word_embeddings", "eos_token_id", "pad_token_id"):  # fmt: skip
        assert shipped[key] == expected[key], key
    assert shipped[RECIPE_KEY] == json.loads(json.dumps(list(RECIPE)))
    assert shipped["areal_devkit_skills"] == ["arithmetic", "tools"]


def test_a_packed_row_rendered_once_equals_the_two_prompt_rendering():
    tok, rng = tiny_tokenizer(), random.Random(3)
    names = reader_names()
    for i in range(45):
        episode = [
            schema_episode(rng, None, names=names),
            sample_episode(rng, "train"),
            bundled_episode(rng, BUNDLED[i % 3]),
        ][i % 3]
        ids, labels, positions = packed_row(tok, episode)
        assert (ids, labels) == encode_packed(tok, episode) and positions is None


def _words(identifier: str) -> list[str]:
    name = identifier.split("__")[-1]
    return [w.lower() for part in name.split("_") for w in re.findall(r"[A-Za-z][a-z]*", part)]


def _is_run(word: str, syllables: list[str]) -> bool:
    return not word or any(
        word.startswith(s) and _is_run(word[len(s) :], syllables) for s in syllables
    )


def test_names_built_of_pieces_use_every_piece_and_never_an_evaluation_word():
    names, rng = reader_names(), random.Random(0)
    episodes = [schema_episode(rng, 4, names=names) for _ in range(400)]
    words = {
        w
        for e in episodes
        for t in e.tools
        for name in [t["function"]["name"], *t["function"]["parameters"]["properties"]]
        for w in _words(name)
    }
    assert {p for p in names.pieces if any(p in w for w in words)} == set(names.pieces)
    for word in words:
        assert word not in EVAL_WORDS and not _is_run(word, ALPHABET_EVAL_SYLLABLES), word
    held = held_out_episodes(4, 100, seed=4, names=ALPHABET_HELD_OUT)
    assert not words & {w for e in held for w in _words(e.call["name"])}


def test_jumped_rows_move_only_the_positions_from_the_users_turn_on():
    tok, rng = tiny_tokenizer(), random.Random(1)
    ids, labels, _ = packed_row(tok, schema_episode(rng, 2, "chat"))
    _, _, positions = jumped(tok, (ids, labels, None), rng)
    user = [i for i, t in enumerate(ids) if t == tok.convert_tokens_to_ids("<|im_start|>")][1]
    assert positions[:user] == list(range(user))
    gap = positions[user] - user
    assert positions[user:] == [i + gap for i in range(user, len(ids))]
    assert gap >= 0 and positions[-1] < MAX_POSITIONS


def test_every_row_kind_trains_an_answer_that_ends_its_turn():
    maker, tok = RowMaker(0), tiny_tokenizer()
    for kind in KIND_IDS:
        ids, labels, _ = maker.row(kind)
        trained = [t for t in labels if t != -100]
        assert len(ids) == len(labels) and trained and trained[-1] == tok.eos_token_id, kind
    batch = padded([maker.row("schema"), maker.row("bare")], [0, 1], tok.pad_token_id)
    assert batch["ids"].shape == batch["labels"].shape == batch["positions"].shape


def test_two_steps_train_and_save_a_loadable_model(tmp_path):
    from transformers import AutoModelForCausalLM

    summary = train(tmp_path / "m", steps=2, rows=4, workers=1, long_every=0)
    assert summary["steps"] == 2
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "m"))
    assert model.config.areal_devkit_skills == ["arithmetic", "tools"]


@pytest.mark.slow  # 5-15 s: a subprocess with torch, or a real server
def test_workers_that_all_died_are_an_error_naming_the_fix_not_a_hang():
    import multiprocessing as mp

    import pytest

    from areal_runtime.models.train_reader import _next_batch

    ctx = mp.get_context("spawn")
    worker = ctx.Process(target=int)  # exits at once, as a worker of an unguarded script does
    worker.start()
    worker.join()
    with pytest.raises(RuntimeError, match="__main__"):
        _next_batch(ctx.Queue(), [worker])
