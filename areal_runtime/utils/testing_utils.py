# SPDX-License-Identifier: Apache-2.0
"""Helpers AReaL's tests import (``tests/utils.py`` re-exports them): model and dataset paths.

A local folder wins; otherwise the hub is asked (``huggingface_hub.snapshot_download``) and a
machine without one gets the hub's error, as with AReaL. Unlike AReaL, importing this module
resolves nothing: AReaL fills its ``MODEL_PATHS`` tables at import, which downloads (or fails)
before a test that never needs a model could run, so the tables here resolve on first use.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Iterator, Mapping
from typing import Any

from areal_runtime.api.workflow_api import RolloutWorkflow

logger = logging.getLogger("areal_runtime.testing_utils")


def get_model_path(local_path: str, hf_id: str) -> str:
    """``local_path`` when it exists, else the hub snapshot of ``hf_id`` (downloaded)."""
    return _resolve(local_path, hf_id, repo_type="model")


def get_dataset_path(local_path: str, hf_id: str) -> str:
    """``local_path`` when it exists, else the hub snapshot of the dataset ``hf_id``."""
    return _resolve(local_path, hf_id, repo_type="dataset")


def _resolve(local_path: str, hf_id: str, *, repo_type: str) -> str:
    if os.path.exists(local_path):
        return local_path
    from huggingface_hub import snapshot_download

    kwargs: dict[str, Any] = {"repo_id": hf_id}
    if repo_type == "dataset":
        kwargs["repo_type"] = "dataset"
    else:  # weights only in the formats the tests load
        kwargs["ignore_patterns"] = ["*.gguf", "*.ggml", "consolidated*"]
    try:
        return snapshot_download(**kwargs)
    except Exception as exc:
        logger.error("no local %s at %s and the hub gave none for %s: %s", repo_type, local_path, hf_id, exc)  # fmt: skip
        raise


class _LazyPaths(Mapping[str, str]):
    """A model-type -> path table whose paths resolve (and download) when first read."""

    def __init__(self, sources: dict[str, tuple[str, str]]) -> None:
        self._sources = sources
        self._resolved: dict[str, str] = {}

    def __getitem__(self, model_type: str) -> str:
        if model_type not in self._resolved:
            self._resolved[model_type] = get_model_path(*self._sources[model_type])
        return self._resolved[model_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


def _local(name: str) -> str:
    return f"/storage/openpsi/models/{name.replace('/', '__')}/"


DENSE_MODEL_PATHS = _LazyPaths(
    {
        "qwen2": (_local("Qwen/Qwen2.5-0.5B-Instruct"), "Qwen/Qwen2.5-0.5B-Instruct"),
        "qwen3": (_local("Qwen/Qwen3-0.6B"), "Qwen/Qwen3-0.6B"),
        "qwen3_5": (_local("Qwen/Qwen3.5-0.8B"), "Qwen/Qwen3.5-0.8B"),
        "qwen2_5_vl": (_local("Qwen/Qwen2.5-VL-3B-Instruct"), "Qwen/Qwen2.5-VL-3B-Instruct"),
        "qwen3_vl": (_local("Qwen/Qwen3-VL-2B-Instruct"), "Qwen/Qwen3-VL-2B-Instruct"),
    }
)
MOE_MODEL_PATHS = _LazyPaths(
    {
        "qwen3_moe": (_local("Qwen/Qwen3-30B-A3B"), "Qwen/Qwen3-30B-A3B"),
        "qwen3_5_moe": (_local("Qwen/Qwen3.5-35B-A3B"), "Qwen/Qwen3.5-35B-A3B"),
        "qwen3_vl_moe": (
            _local("Qwen/Qwen3-VL-30B-A3B-Instruct"),
            "Qwen/Qwen3-VL-30B-A3B-Instruct",
        ),
    }
)
MODEL_PATHS = _LazyPaths({**DENSE_MODEL_PATHS._sources, **MOE_MODEL_PATHS._sources})


class TestWorkflow(RolloutWorkflow):
    """A workflow that returns a random short trajectory after 0.1 s (for executor tests)."""

    __test__ = False  # not a pytest test class despite its name

    async def arun_episode(self, engine: Any, data: dict[str, Any]) -> dict[str, Any]:
        import torch

        await asyncio.sleep(0.1)
        prompt_len, gen_len = random.randint(2, 8), random.randint(2, 8)
        seqlen = prompt_len + gen_len
        return {
            "input_ids": torch.randint(0, 100, (1, seqlen)),
            "attention_mask": torch.ones(1, seqlen, dtype=torch.bool),
            "loss_mask": torch.tensor([0] * prompt_len + [1] * gen_len, dtype=torch.bool)[None],
            "rewards": torch.randn(1),
        }
