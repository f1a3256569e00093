# SPDX-License-Identifier: Apache-2.0
"""Every YAML config of the pinned AReaL release loads here as it loads in AReaL.

Each file is loaded twice with the same loader call its script makes (``load_expr_config``
and the config class the script names): by AReaL and by areal_runtime, the class's module
renamed ``areal`` -> ``areal_runtime``. Every field the runtime keeps must hold the same value
in both (the conversions, interpolations and defaults are OmegaConf's in both). The YAML files
are read from the release at test time (``areal_release.py``), never copied here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .areal_release import release_tree, renamed

# The config class each YAML is loaded with: the class its script passes to load_expr_config,
# found in AReaL's cli_args (a bare name) or in the example's own module ("file.py:Class").
CONFIG_CLASS = {
    "agent_workflow/config.yaml": "agent_workflow/configs.py:AgentConfig",
    "agent_workflow/config_claude.yaml": "agent_workflow/configs.py:AgentConfig",
    "alignment/hhrlhf_dpo.yaml": "DPOConfig",
    "alignment/hhrlhf_rw.yaml": "RWConfig",
    "camel/config.yaml": "camel/train.py:AgentRLConfig",
    "countdown/train_config.yaml": "GRPOConfig",
    "distillation/gsm8k_grpo_distill.yaml": "GRPOConfig",
    "experimental/inference_service/online_rollout.yaml": "PPOConfig",
    "experimental/inference_service/tau2_rollout.yaml": (
        "experimental/inference_service/tau2_rollout.py:Tau2GatewayRolloutConfig"
    ),
    "experimental/prox_approx/gsm8k_grpo_prox_approx.yaml": "GRPOConfig",
    "experimental/prox_approx/gsm8k_grpo_prox_approx_eval.yaml": "GRPOConfig",
    "math/gsm8k_sft.yaml": "SFTConfig",
    "math/gsm8k_sft_archon_fp8.yaml": "SFTConfig",
    "multi_turn_math/gsm8k_grpo_mt.yaml": "multi_turn_math/config.py:MultiTurnGRPOConfig",
    "openai_agents/config.yaml": "openai_agents/config.py:AgentRLConfig",
    "openclaw/config.yaml": "PPOConfig",
    # Its script (ASearcher) is not in the release: GRPOConfig plus its one extra key.
    "search_agent/local_1.5b_example.yaml": "max_turns",
    "search_agent/tongyi_deepresearch/config.yaml": (
        "search_agent/tongyi_deepresearch/config.py:AgentRLConfig"
    ),
    "tau2/*.yaml": "tau2/utils.py:Tau2PPOConfig",
    "terminal_bench/*.yaml": "terminal_bench/agent_rl_config.py:AgentRLConfig",
    "tir/tir_math_config.yaml": "tir/tir_workflow.py:TIRGRPOConfig",
    "vlm/clevr_count_70k_sft.yaml": "SFTConfig",
    # Every other YAML of math/, scaffolding/, skypilot/, vlm/, vlm_npu/: the GRPO scripts.
    "*": "GRPOConfig",
}
# Files AReaL 1.0.4 itself refuses to load (keys its dataclasses dropped: behave_imp_weight_*,
# teacher.backend, launcher) are refused here too, except where the runtime keeps the section
# as an ignored mapping (it has no teacher model, so teacher's keys are not checked) and where
# AReaL requires a key the runtime gives a laptop default (rollout.backend, train_dataset.type).
LENIENT_HERE = {"distillation/gsm8k_grpo_distill.yaml": "teacher (ignored here) has 'backend'"}
# Config classes the runtime cannot build, with the reason; the test checks they fail that way.
NOT_HERE = {
    "experimental/inference_service/tau2_rollout.yaml": (
        "SGLangConfig",
        "its class holds AReaL's SGLangConfig, the settings of an SGLang GPU server",
    ),
}
# Not experiment configs: environment-variable reference, SkyPilot cluster specs.
NOT_CONFIGS = ("environ_ref.yaml", "skypilot/ray_cluster.sky.yaml", "skypilot/single_node.sky.yaml")


def release_yamls() -> list[str]:
    examples = release_tree() / "examples"
    found = sorted(str(p.relative_to(examples)) for p in examples.rglob("*.yaml"))
    return [name for name in found if name not in NOT_CONFIGS]


def class_spec(name: str) -> str:
    for pattern, spec in CONFIG_CLASS.items():
        if pattern != "*" and Path(name).match(pattern):
            return spec
    return CONFIG_CLASS["*"]


LIGHT_MODULES = ("__future__", "dataclasses", "typing", "enum")


def _config_part(node: ast.stmt) -> bool:
    """A dataclass definition or an import it needs (the stdlib's, the config module's)."""
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module in LIGHT_MODULES or module.endswith("api.cli_args")
    if isinstance(node, ast.Import):
        return all(alias.name in LIGHT_MODULES for alias in node.names)
    if isinstance(node, ast.ClassDef):
        return any("dataclass" in ast.unparse(d) for d in node.decorator_list)
    return False


def dataclasses_of(source: str, module_name: str) -> ModuleType:
    """The module's dataclasses alone: its other imports (tau2, camel, torch ...) are not needed
    to read a config, and a config file must load where those are not installed."""
    keep = [node for node in ast.parse(source).body if _config_part(node)]
    module = sys.modules[module_name] = ModuleType(module_name)
    exec(compile(ast.Module(body=keep, type_ignores=[]), module_name, "exec"), module.__dict__)
    return module


def config_class(pkg: str, spec: str) -> type:
    cli_args = importlib.import_module(f"{pkg}.api.cli_args")
    if spec == "max_turns":
        return dataclasses.make_dataclass(
            "SearchConfig", [("max_turns", int, dataclasses.field(default=1))],
            bases=(cli_args.GRPOConfig,),
        )  # fmt: skip
    if ":" not in spec:
        return getattr(cli_args, spec)
    file, cls = spec.split(":")
    source = (release_tree() / "examples" / file).read_text()
    if pkg == "areal_runtime":
        source = renamed(source)
    return getattr(dataclasses_of(source, f"{pkg}_{Path(file).stem}"), cls)


def load(pkg: str, yaml_file: Path, cls: type) -> Any:
    """What ``load_expr_config(["--config", yaml_file], cls)`` builds, without AReaL's side effects
    (it also points name_resolve at the cluster and writes the config under fileroot)."""
    if pkg == "areal_runtime":
        from areal_runtime.api.config_loading import load_expr_config

        return load_expr_config(["--config", str(yaml_file)], cls)[0]
    from areal.api.cli_args import parse_cli_args, to_structured_cfg
    from omegaconf import OmegaConf

    cfg, _ = parse_cli_args(["--config", str(yaml_file)])
    return OmegaConf.to_object(to_structured_cfg(cfg, config_cls=cls))


def kept_values(ours: Any, theirs: Any, where: str = "") -> dict[str, tuple[Any, Any]]:
    """``{dotted field: (runtime value, AReaL value)}`` where they differ, over kept fields."""
    out: dict[str, tuple[Any, Any]] = {}
    for f in dataclasses.fields(ours):
        if f.metadata.get("ignored"):
            continue
        mine, real = getattr(ours, f.name), getattr(theirs, f.name, "<missing in AReaL>")
        if dataclasses.is_dataclass(mine) and dataclasses.is_dataclass(real):
            out.update(kept_values(mine, real, f"{where}{f.name}."))
        elif isinstance(mine, dict) and dataclasses.is_dataclass(real):
            # A section the runtime keeps as a mapping (stats_logger.wandb ...): the keys it has.
            as_dict = dataclasses.asdict(real)
            differ = {k: (v, as_dict.get(k)) for k, v in mine.items() if as_dict.get(k) != v}
            out.update({f"{where}{f.name}.{k}": v for k, v in differ.items()})
        elif mine != real:
            out[where + f.name] = (mine, real)
    return out


def test_the_release_has_the_configs_this_suite_names():
    names = release_yamls()
    assert len(names) > 40, names  # the release's examples/ was found, not an empty folder
    for pattern in CONFIG_CLASS:
        if pattern != "*":
            assert any(Path(n).match(pattern) for n in names), f"{pattern} is gone from the release"


@pytest.mark.parametrize("name", release_yamls())
def test_release_yaml_loads_with_the_same_values(name: str) -> None:
    yaml_file = release_tree() / "examples" / name
    spec = class_spec(name)
    if name in NOT_HERE:
        with pytest.raises(ImportError, match=NOT_HERE[name][0]):
            config_class("areal_runtime", spec)
        return
    try:
        theirs = load("areal", yaml_file, config_class("areal", spec))
    except Exception as exc:  # AReaL refuses its own file
        # A key AReaL requires (rollout.backend, train_dataset.type) has a laptop default here.
        if name in LENIENT_HERE or type(exc).__name__ == "MissingMandatoryValue":
            load("areal_runtime", yaml_file, config_class("areal_runtime", spec))
            return
        from areal_runtime.api.config_loading import ConfigError

        with pytest.raises(ConfigError):
            load("areal_runtime", yaml_file, config_class("areal_runtime", spec))
        assert type(exc).__name__ in ("ValueError", "ConfigKeyError"), exc
        return
    assert name not in LENIENT_HERE, f"AReaL loads {name} now: drop it from LENIENT_HERE"
    ours = load("areal_runtime", yaml_file, config_class("areal_runtime", spec))
    assert type(ours).__name__ == type(theirs).__name__
    assert kept_values(ours, theirs) == {}
