# SPDX-License-Identifier: Apache-2.0
"""The training configs (GRPOConfig and what it nests) against AReaL's: same names, same defaults.

The runtime keeps the fields that mean something on one machine; every one of them must exist
in AReaL's dataclass with the same default, so a YAML written for AReaL loads here (fields the
runtime does not keep are accepted and reported as ignored, tested in tests/areal_runtime).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from .conftest import mod

CONFIGS = [
    "GRPOConfig", "PPOConfig", "PPOActorConfig", "OptimizerConfig", "NormConfig",
    "InferenceEngineConfig", "TrainDatasetConfig", "ValidDatasetConfig", "SaverConfig",
    "EvaluatorConfig", "MicroBatchSpec",
]  # fmt: skip


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = f.default_factory()  # type: ignore[misc]
        return type(value).__name__ if dataclasses.is_dataclass(value) else value
    return dataclasses.MISSING


@pytest.mark.parametrize("name", CONFIGS)
def test_runtime_fields_exist_in_areal_with_the_same_defaults(name: str) -> None:
    theirs = {f.name: f for f in dataclasses.fields(getattr(mod("areal", "api.cli_args"), name))}
    ours = dataclasses.fields(getattr(mod("areal_runtime", "api.cli_args"), name))
    missing = [f.name for f in ours if f.name not in theirs]
    assert not missing, f"{name} fields AReaL does not have: {missing}"
    different = {
        f.name: (_default(f), _default(theirs[f.name]))
        for f in ours
        if not f.metadata.get("ignored")  # cluster/GPU fields: accepted, reported, unused
        and _default(theirs[f.name])
        != "???"  # required in AReaL: the runtime gives a laptop default
        and _default(f) != _default(theirs[f.name])
    }
    assert not different, f"{name} defaults (runtime, AReaL) differ: {different}"


@pytest.mark.parametrize("example", ["gsm8k/gsm8k_grpo_laptop.yaml", "online_agent/config.yaml"])
def test_the_laptop_yaml_loads_in_areal_too(example: str) -> None:
    """The shipped YAMLs only use keys AReaL's GRPOConfig knows (they load under both)."""
    from pathlib import Path

    yaml_path = Path(__file__).resolve().parents[2] / "examples" / example
    if not yaml_path.is_file():
        pytest.fail(f"{yaml_path} is missing")
    from omegaconf import OmegaConf

    config = OmegaConf.to_container(OmegaConf.load(yaml_path), resolve=False)
    schema = mod("areal", "api.cli_args").GRPOConfig

    def unknown(node: Any, cls: Any, where: str) -> list[str]:
        if not isinstance(node, dict) or not dataclasses.is_dataclass(cls):
            return []
        fields = {f.name: f for f in dataclasses.fields(cls)}
        out = []
        for key, value in node.items():
            if key not in fields:
                out.append(f"{where}{key}")
                continue
            f = fields[key]
            nested = f.default_factory() if f.default_factory is not dataclasses.MISSING else None  # type: ignore[misc]
            out += unknown(value, type(nested) if nested is not None else None, f"{where}{key}.")
        return out

    assert unknown(config, schema, "") == []
