# SPDX-License-Identifier: Apache-2.0
"""get_custom_dataset picks a converter by the dataset named in the path and the type, as
AReaL does, and it works on local copies (the ToRL parquet rows were passed through as is)."""

import json

import pytest

from areal_runtime.api.cli_args import TrainDatasetConfig
from areal_runtime.dataset import get_custom_dataset
from areal_runtime.dataset.converters import dataset_name


class WordTokenizer:
    """One id per whitespace-separated word; EOS is its own word."""

    eos_token = " <eos>"

    def encode(self, text):
        return [sum(map(ord, word)) for word in text.split()]


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def load(path, kind, **kwargs):
    return get_custom_dataset(
        "train", TrainDatasetConfig(path=str(path), type=kind), tokenizer=WordTokenizer(), **kwargs
    )


TORL_ROW = {
    "data_source": "torl",
    "prompt": [{"role": "user", "content": "What is 2+3?"}],
    "ability": "math",
    "reward_model": {"ground_truth": "5", "style": "rule"},
    "extra_info": {"index": 0},
}


def test_torl_rows_become_messages_and_a_boxed_answer(tmp_path):
    file = write_jsonl(tmp_path / "torl_data" / "train.jsonl", [TORL_ROW])
    (row,) = load(file, "rl")
    assert row["messages"] == [{"role": "user", "content": "What is 2+3?"}]
    assert row["answer"] == "\\boxed{5}"
    assert "prompt" not in row and "reward_model" not in row
    assert row["extra_info"] == {"index": 0}  # other columns stay, as in AReaL
    with pytest.raises(NotImplementedError, match="type: rl"):
        load(file, "sft")


def test_gsm8k_rl_and_sft_on_a_local_copy(tmp_path):
    folder = tmp_path / "gsm8k"
    write_jsonl(folder / "train.jsonl", [{"question": "one plus one?", "answer": " two"}])
    (rl,) = load(folder, "rl")
    assert rl["messages"][0]["content"].startswith("one plus one?\nPlease put your final")
    assert rl["answer"] == " two" and "question" not in rl
    (sft,) = load(folder, "sft")
    assert len(sft["input_ids"]) == 5  # one plus one? two <eos>
    assert sft["loss_mask"] == [0, 0, 0, 1, 1]


def test_hh_rlhf_pairs_for_reward_models_and_dpo(tmp_path):
    file = write_jsonl(
        tmp_path / "hh-rlhf" / "train.jsonl",
        [{"chosen": "Human: hi Assistant: hello", "rejected": "Human: hi Assistant: go away"}],
    )
    (rw,) = load(file, "rw")
    assert len(rw["chosen_ids"]) == 5 and len(rw["rejected_ids"]) == 6
    (dpo,) = load(file, "dpo")
    assert dpo["chosen_loss_mask"] == [0, 0, 0, 1, 1]  # the shared prompt is not trained
    assert dpo["rejected_loss_mask"] == [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="hh-rlhf, which AReaL reads as type dpo or rw"):
        load(file, "rl")


def test_length_filter_applies_to_converted_rows(tmp_path):
    folder = tmp_path / "gsm8k"
    write_jsonl(
        folder / "train.jsonl",
        [{"question": "a b", "answer": " c"}, {"question": "a", "answer": " c"}],
    )
    config = TrainDatasetConfig(path=str(folder), type="sft", max_length=3)  # a c <eos> fits
    (row,) = get_custom_dataset("train", config, tokenizer=WordTokenizer())
    assert row["loss_mask"] == [0, 1, 1]


def test_a_named_dataset_with_the_wrong_columns_says_which(tmp_path):
    file = write_jsonl(tmp_path / "torl_data" / "train.jsonl", [{"question": "q"}])
    with pytest.raises(
        ValueError, match=r"torl_data \(rl\) row 0 has no \['prompt', 'reward_model'\]"
    ):
        load(file, "rl")


def test_names_are_found_as_areal_finds_them():
    assert dataset_name("/data/openai/gsm8k") == "gsm8k"
    assert dataset_name("/data/ViRL39K/train.parquet") == "virl39k"  # case-insensitive, as there
    assert dataset_name("/data/torl_data/test.parquet") == "torl_data"
    assert dataset_name("/data/Anthropic/hh-rlhf") == "hh-rlhf"
    assert dataset_name("/data/my_math") is None


def test_hugging_face_download_shards_are_found(tmp_path):
    shard = tmp_path / "gsm8k" / "main" / "train-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ModuleNotFoundError:
        shard.write_bytes(b"PAR1")
        with pytest.raises(ImportError, match=r"train-00000-of-00001\.parquet needs pyarrow"):
            load(tmp_path / "gsm8k", "rl")
        return
    pq.write_table(pa.Table.from_pylist([{"question": "q", "answer": "a"}]), shard)
    (row,) = load(tmp_path / "gsm8k", "rl")
    assert row["answer"] == "a" and row["messages"][0]["content"].startswith("q\n")
