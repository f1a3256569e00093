# SPDX-License-Identifier: Apache-2.0
"""Per-dataset row converters, chosen as AReaL's ``get_custom_dataset`` chooses them.

AReaL dispatches on a name found in the dataset path (``gsm8k``, ``torl_data``, ``hh-rlhf``,
...) and the config's ``type`` (rl / sft / rw / dpo) to one function per pair, each turning
that dataset's columns into what its trainer reads (``messages``/``answer`` for RL,
``input_ids``/``loss_mask`` for SFT, chosen/rejected ids for reward models and DPO). The same
rule here works on local copies: ``/data/torl_data/train.parquet`` is ToRL's format because
its path says so, as in AReaL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Rows = list[dict[str, Any]]
Converter = Callable[[Rows, Any], Rows]

GSM8K_INSTRUCTION = "\nPlease put your final answer within \\boxed{}."

# AReaL's order of checks: the first name found in the path decides.
DATASET_NAMES = ("gsm8k", "clevr_count_70k", "geometry3k", "virl39k", "hh-rlhf", "torl_data")


def dataset_name(path: str) -> str | None:
    """The known dataset a path names (``virl39k`` case-insensitively, as in AReaL)."""
    for name in DATASET_NAMES:
        if name in (path.lower() if name == "virl39k" else path):
            return name
    return None


def _need_tokenizer(tokenizer: Any, what: str) -> Any:
    if tokenizer is None:
        raise ValueError(f"{what} rows are tokenized here: pass tokenizer= to get_custom_dataset")
    return tokenizer


def _columns(rows: Rows, needed: tuple[str, ...], what: str) -> None:
    for i, row in enumerate(rows):
        missing = [c for c in needed if c not in row]
        if missing:
            raise ValueError(
                f"{what} row {i} has no {missing} (columns: {sorted(row)}); the path names "
                f"this dataset, so its rows need {list(needed)}"
            )


def gsm8k_rl(rows: Rows, tokenizer: Any) -> Rows:
    """The question as one user message asking for a boxed answer; ``answer`` kept."""
    _columns(rows, ("question",), "gsm8k (rl)")
    out = []
    for row in rows:
        rest = {k: v for k, v in row.items() if k != "question"}
        content = str(row["question"]) + GSM8K_INSTRUCTION
        out.append({**rest, "messages": [{"role": "user", "content": content}]})
    return out


def gsm8k_sft(rows: Rows, tokenizer: Any) -> Rows:
    """question + answer + EOS as one sequence; the loss on the answer's tokens only."""
    tok = _need_tokenizer(tokenizer, "gsm8k sft")
    _columns(rows, ("question", "answer"), "gsm8k (sft)")
    out = []
    for row in rows:
        ids = tok.encode(row["question"] + row["answer"] + (tok.eos_token or ""))
        prompt = len(tok.encode(row["question"]))
        rest = {k: v for k, v in row.items() if k not in ("question", "answer")}
        out.append(
            {**rest, "input_ids": ids, "loss_mask": [0] * prompt + [1] * (len(ids) - prompt)}
        )
    return out


def torl_rl(rows: Rows, tokenizer: Any) -> Rows:
    """ToRL's parquet rows: ``prompt`` (chat messages) -> ``messages``, the ground truth of
    ``reward_model`` -> ``answer`` as ``\\boxed{...}`` (what the math reward compares)."""
    _columns(rows, ("prompt", "reward_model"), "torl_data (rl)")
    out = []
    for row in rows:
        truth = row["reward_model"]["ground_truth"]
        rest = {k: v for k, v in row.items() if k not in ("prompt", "reward_model")}
        out.append({**rest, "messages": list(row["prompt"]), "answer": f"\\boxed{{{truth}}}"})
    return out


def torl_sft(rows: Rows, tokenizer: Any) -> Rows:
    raise NotImplementedError("torl_data has no SFT format (AReaL's neither): use type: rl")


def _pair_ids(row: dict[str, Any], tok: Any) -> tuple[list[int], list[int]]:
    eos = tok.eos_token or ""
    return tok.encode(row["chosen"] + eos), tok.encode(row["rejected"] + eos)


def hhrlhf_rw(rows: Rows, tokenizer: Any) -> Rows:
    """Chosen and rejected conversations as token ids, for a reward model."""
    tok = _need_tokenizer(tokenizer, "hh-rlhf rw")
    _columns(rows, ("chosen", "rejected"), "hh-rlhf (rw)")
    out = []
    for row in rows:
        chosen, rejected = _pair_ids(row, tok)
        out.append({"chosen_ids": chosen, "rejected_ids": rejected})
    return out


def hhrlhf_dpo(rows: Rows, tokenizer: Any) -> Rows:
    """Chosen/rejected ids with loss masks that skip their shared prompt prefix."""
    out = hhrlhf_rw(rows, tokenizer)
    for row in out:
        chosen, rejected = row["chosen_ids"], row["rejected_ids"]
        shared = 0
        while shared < min(len(chosen), len(rejected)) and chosen[shared] == rejected[shared]:
            shared += 1
        row["chosen_loss_mask"] = [0] * shared + [1] * (len(chosen) - shared)
        row["rejected_loss_mask"] = [0] * shared + [1] * (len(rejected) - shared)
    return out


CONVERTERS: dict[tuple[str, str], Converter] = {
    ("gsm8k", "rl"): gsm8k_rl,
    ("gsm8k", "sft"): gsm8k_sft,
    ("torl_data", "rl"): torl_rl,
    ("torl_data", "sft"): torl_sft,
    ("hh-rlhf", "rw"): hhrlhf_rw,
    ("hh-rlhf", "dpo"): hhrlhf_dpo,
}


def converter_for(path: str, kind: str) -> Converter | None:
    """The converter AReaL would use for ``path`` and ``kind``; None for other datasets.

    A known name with a type it has no converter for is an error naming the ones it has.
    The vision datasets (clevr_count_70k, geometry3k, virl39k) are read as they are: their
    rows already hold ``messages``/``images``/``answer`` in the runtime's vision format.
    """
    name = dataset_name(path)
    if name is None or name in ("clevr_count_70k", "geometry3k", "virl39k"):
        return None
    found = CONVERTERS.get((name, kind))
    if found is None:
        kinds = sorted(k for n, k in CONVERTERS if n == name)
        raise ValueError(
            f"dataset {path} is {name}, which AReaL reads as type {' or '.join(kinds)}, "
            f"not {kind!r}: set the dataset's type"
        )
    return found
