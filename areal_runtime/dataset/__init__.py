# SPDX-License-Identifier: Apache-2.0
"""AReaL's ``areal.dataset.get_custom_dataset`` for local files: JSONL, JSON or parquet.

There is no dataset hub here: ``dataset_config.path`` is a file, or a folder holding
``{split}.jsonl`` / ``{split}.parquet`` / ``{split}.json`` (or a Hugging Face download's
``{split}-*.parquet``, also one folder down). Rows come back as a list of dicts, converted as
AReaL converts them when the path names a dataset AReaL knows (``converters.py``: gsm8k,
torl_data, hh-rlhf for rl/sft/rw/dpo). Otherwise, for ``type: rl``, a row with a
``question`` and no ``messages`` gets AReaL's GSM8K prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from areal_runtime.dataset.converters import GSM8K_INSTRUCTION, converter_for

SUFFIXES = (".jsonl", ".parquet", ".json")


def _find(path: Path, split: str | None) -> list[Path]:
    """The file(s) holding ``split``: the path itself, ``{split}.*``, or parquet shards."""
    if path.is_file():
        return [path]
    if path.is_dir():
        names = [f"{split}{s}" for s in SUFFIXES] if split else []
        for name in names:
            if (path / name).is_file():
                return [path / name]
        # A Hugging Face dataset download: main/train-00000-of-00001.parquet and the like.
        shards = sorted(path.glob(f"{split}-*.parquet")) + sorted(path.glob(f"*/{split}-*.parquet"))
        if split and shards:
            return shards
        raise FileNotFoundError(
            f"dataset folder {path} has no {' / '.join(names) or 'split file'}; name the file "
            "after the split or point path at the file itself"
        )
    raise FileNotFoundError(
        f"dataset {path} does not exist; there is no dataset hub here, so give a local "
        f"{' / '.join(SUFFIXES)} file (or a folder with train.jsonl, test.jsonl)"
    )


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSONL, JSON (a list of objects) or parquet file."""
    file = Path(path)
    if file.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ModuleNotFoundError:
            raise ImportError(
                f"reading {file} needs pyarrow, which is not installed: pip install pyarrow, "
                "or convert the file to JSONL"
            ) from None
        return pq.read_table(file).to_pylist()
    if file.suffix == ".json":
        rows = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError(f"{file}: a .json dataset must be a list of objects")
        return rows
    from areal_runtime.infra.workflow_executor import iter_dataset

    return list(iter_dataset(file))


def get_custom_dataset(
    split: str | None = None,
    dataset_config: Any = None,
    tokenizer: Any = None,
    processor: Any = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Load ``dataset_config.path`` (AReaL's signature); ``max_length`` filters long prompts."""
    path = kwargs.pop("path", None) or getattr(dataset_config, "path", None)
    if not path:
        raise ValueError(
            "get_custom_dataset needs dataset_config.path (a local JSONL/parquet file)"
        )
    kind = kwargs.pop("type", None) or getattr(dataset_config, "type", "rl")
    max_length = kwargs.pop("max_length", None) or getattr(dataset_config, "max_length", None)
    split = split or getattr(dataset_config, "split", None)
    rows = [row for file in _find(Path(path), split) for row in read_rows(file)]
    convert = converter_for(str(path), kind)
    if convert is not None:
        rows = convert(rows, tokenizer)
    elif kind == "rl":
        for row in rows:
            if "messages" not in row and "question" in row:
                row["messages"] = [
                    {"role": "user", "content": str(row["question"]) + GSM8K_INSTRUCTION}
                ]
    if max_length is not None and tokenizer is not None:
        rows = [r for r in rows if _fits(r, tokenizer, max_length)]
    if not rows:
        raise ValueError(f"dataset {path} (split {split}) has no rows")
    return rows


def _fits(row: dict[str, Any], tokenizer: Any, max_length: int) -> bool:
    """AReaL's length filters: the first message for RL, every id sequence otherwise."""
    ids = [row[k] for k in ("input_ids", "chosen_ids", "rejected_ids") if k in row]
    if ids:
        return all(len(seq) <= max_length for seq in ids)
    if row.get("messages"):
        return len(tokenizer.encode(str(row["messages"][0]["content"]))) <= max_length
    return True


__all__ = ["get_custom_dataset", "read_rows"]
